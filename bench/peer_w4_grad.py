"""W4, peers: the gradient alone of the MLP loss in PyTorch Python eager autograd.

The shared peers' w4_mlp.py times whole training steps only; this times the gradient
alone of the same raw-tensor model, with the same protocol (bench/peers/py/common.py:
warm-up, then the median of n samples, STEPS calls per sample) and output format:
  h = tanh(x @ W1 + b1), y = h @ W2 + b2, loss = mean((y - t)^2)
  x [128,784], t [128,10] torch.randn (seed 0), W1 [784,256] / sqrt(784), W2 [256,10] / sqrt(256),
  b1, b2 zeros (as w4_mlp.py; torch.addmm for the bias, as w4_mlp.py).
GFLOP/s counts the peers' matmul FLOPs per step (forward plus dW1, dW2, dh), which a
gradient computes too.

Usage (run from the peers' py/ folder, or with PEERS_PY pointing at it, so that
`common` imports):  peer_w4_grad.py
"""
import os
import sys

sys.path.insert(0, os.environ.get("PEERS_PY", os.getcwd()))
from common import measure, report, setup_torch, header  # noqa: E402

torch = setup_torch(2)
header("W4 grad")
torch.manual_seed(0)
B, D, H, O = 128, 784, 256, 10
STEPS = 50
FLOP_STEP = 2 * B * (D * H + H * O) + 2 * (D * H * B + H * O * B + B * O * H)

x = torch.randn(B, D)
t = torch.randn(B, O)
W1 = (torch.randn(D, H) * (1 / D ** 0.5)).requires_grad_()
b1 = torch.zeros(H, requires_grad=True)
W2 = (torch.randn(H, O) * (1 / H ** 0.5)).requires_grad_()
b2 = torch.zeros(O, requires_grad=True)
params = [W1, b1, W2, b2]


def loss_fn():
    h = torch.tanh(torch.addmm(b1, x, W1))
    y = torch.addmm(b2, h, W2)
    return ((y - t) ** 2).mean()


def grad_fn():  # the functional form, fresh gradients as rune::grad gives
    return torch.autograd.grad(loss_fn(), params)


def backward_fn():  # what training loops write: .grad filled, then cleared
    loss_fn().backward()
    for p in params:
        p.grad = None


def per(st, unit):
    s = st[0] / STEPS
    return f"{s * 1e3:.3f} ms/{unit}, {FLOP_STEP / s / 1e9:.1f} GFLOP/s (matmul flops)"


# Check: autograd against the backward pass written by hand (dy = 2 r / (B O), tanh' = 1 - h^2).
with torch.no_grad():
    h = torch.tanh(torch.addmm(b1, x, W1))
    r = torch.addmm(b2, h, W2) - t
    dy = r * (2.0 / (B * O))
    dz = (dy @ W2.T) * (1 - h * h)
    ref = [x.T @ dz, dz.sum(0), h.T @ dy, dy.sum(0)]
g = grad_fn()
worst = max(float((a - b).abs().max()) / float(b.abs().max()) for a, b in zip(g, ref))
print(f"# W4 PyTorch grad check: loss {float(loss_fn()):.7f}; largest |autograd - hand-written| / max|g| = "
      f"{worst:.3g}: {'ok' if worst <= 1e-4 else 'WRONG'}", flush=True)


def run(fn):
    def sample():
        for _ in range(STEPS):
            fn()
    return sample


note = f"torch threads=2; {STEPS} calls per sample"
st = measure(run(grad_fn), reps=11, warmup=2)
report("W4", "PyTorch Python eager autograd grad (torch.autograd.grad)", st, per(st, "call"),
       note + "; forward + backward, fresh gradients, no update")
st = measure(run(backward_fn), reps=11, warmup=2)
report("W4", "[extra] PyTorch Python eager, loss.backward() (grads then cleared)", st, per(st, "call"), note)
with torch.no_grad():
    st = measure(run(loss_fn), reps=11, warmup=2)
report("W4", "[extra] PyTorch Python eager forward only (no_grad)", st, f"{st[0] / STEPS * 1e3:.3f} ms/call",
       note + "; the forward third of the FLOPs")
