"""W9 (train), the peer: W4's MLP trained data-parallel by PyTorch's DistributedDataParallel
over the gloo backend, two processes on this machine (one thread each, as rune's two ranks
run one per core), batch 128 per process, float32, SGD with lr 0.01: the same model as
bench/mlp.hpp (h = tanh(x W1 + b1), y = h W2 + b2, loss = mean((y - t)^2)). Also the same
step without DDP (both processes at once) and gloo's all_reduce of the gradient's 203,530
floats. Process 0 reports, in the peers' line format (bench/peers/py/common.py).

Usage (with PEERS_PY pointing at the peers' py/ folder, as run.sh's pyrun does):
    peer_w9_ddp.py
"""
import os
import sys

sys.path.insert(0, os.environ.get("PEERS_PY", os.getcwd()))
from common import measure, report, header  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

RANKS, B, D, H, O, LR, STEPS = 2, 128, 784, 256, 10, 0.01, 20


def model():
    torch.manual_seed(0)  # (the same parameters in every process)
    return torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.Tanh(), torch.nn.Linear(H, O))


def worker(rank):
    torch.set_num_threads(1)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("gloo", rank=rank, world_size=RANKS)
    g = torch.Generator().manual_seed(100 + rank)  # (each process's own batch)
    x, t = torch.randn(B, D, generator=g), torch.randn(B, O, generator=g)
    notes = f"{RANKS} processes, batch 128 per process, float32, torch threads=1; {STEPS} steps per sample"

    def trainer(net):
        opt = torch.optim.SGD(net.parameters(), lr=LR)

        def steps():
            for _ in range(STEPS):
                opt.zero_grad()
                loss = ((net(x) - t) ** 2).mean()
                loss.backward()
                opt.step()
        return steps

    ddp = torch.nn.parallel.DistributedDataParallel(model())
    st = measure(trainer(ddp), reps=7, warmup=1)
    w1 = ddp.module[0].weight.detach().clone()
    every = [torch.empty_like(w1) for _ in range(RANKS)]
    dist.all_gather(every, w1)
    same = all(bool(torch.equal(w, w1)) for w in every)
    if rank == 0:
        header("W9 peer: PyTorch DDP (gloo)")
        print(f"# W9 peer check: after the timed DDP steps every process's first weight has the same bits: "
              f"{'yes' if same else 'NO'}", flush=True)
        report("W9", "PyTorch DDP (gloo) MLP step", st, f"{st[0] / STEPS * 1e3:.2f} ms/call", notes)
    st = measure(trainer(model()), reps=7, warmup=1)
    if rank == 0:
        report("W9", "PyTorch MLP step alone (no DDP; every process at once)", st,
               f"{st[0] / STEPS * 1e3:.2f} ms/call", notes)
    n = D * H + H + H * O + O
    grad = torch.ones(n)
    calls = 20

    def reduce():
        for _ in range(calls):
            dist.all_reduce(grad)
    st = measure(reduce, reps=7, warmup=1)
    if rank == 0:
        report("W9", "PyTorch gloo all_reduce of the gradient", st, f"{st[0] / calls * 1e3:.2f} ms/call",
               f"{RANKS} processes; {n} float32 (the MLP's parameters)")
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, nprocs=RANKS, join=True)
