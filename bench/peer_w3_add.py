"""W3 (a), peers: the single add `a + b` over 10,000,000 float32 in numpy and PyTorch eager.

The shared peers' w3_elementwise.py only times the whole expression; this adds the
single-op row with the same protocol (bench/peers/py/common.py: warm-up, then the
median of n samples) and the same output line format. GB/s counts 12 B per element
(2 reads + 1 write; write-allocate not counted), as rune's bench_w3 does.

Usage (run from the peers' py/ folder, or with PEERS_PY pointing at it, so that
`common` imports):  peer_w3_add.py numpy|eager [threads]
"""
import os
import sys

sys.path.insert(0, os.environ.get("PEERS_PY", os.getcwd()))
from common import measure, report, header  # noqa: E402

import numpy as np  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "numpy"
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
N = 10_000_000
an = np.linspace(-3.0, 3.0, N, dtype=np.float32)
bn = np.ones(N, dtype=np.float32)


def derived(st):
    return f"{st[0] * 1e3:.2f} ms/call, {12 * N / st[0] / 1e9:.2f} GB/s (12 B/elem)"


if mode == "numpy":
    header("W3add mode=numpy")
    c = an + bn
    assert c.dtype == np.float32 and bool((c == an + np.float32(1)).all())
    st = measure(lambda: an + bn, reps=21, warmup=3)
    report("W3add", "numpy a + b", st, derived(st), "single thread; new result per call")
    print(f"# W3add checksum (numpy a + b): {float(c.sum(dtype=np.float64))!r}")
elif mode == "eager":
    import torch
    torch.set_num_threads(threads)
    header(f"W3add mode=eager threads={threads}")
    at = torch.from_numpy(an)
    bt = torch.from_numpy(bn)
    c = at + bt
    assert c.dtype == torch.float32 and bool((c.numpy() == an + np.float32(1)).all())
    st = measure(lambda: at + bt, reps=21, warmup=3)
    report("W3add", f"PyTorch eager a + b (threads={threads})", st, derived(st),
           f"torch threads={threads}; new result per call")
    print(f"# W3add checksum (PyTorch eager a + b): {float(c.numpy().sum(dtype=np.float64))!r}")
else:
    raise SystemExit(f"unknown mode {mode}")
