"""W2, peers' first calls: what a JIT costs before its first result, beside rune's
first call of jit(scan) in bench_w2 (trace + compile + first run, a fresh jit object
per sample).

The shared peers' w_jit_peers.py (Numba) and w2_lorenz.py (torch.jit.script) warm
their functions up untimed; this times the first call of a freshly compiled function
with the same protocol (bench/peers/py/common.py: the median of n samples) and
the same output line format:
  numba      a new numba.njit dispatcher of the Lorenz-63 scalar loop per sample
             (type inference + LLVM compile + the first run of 100,000 steps)
  torchjit   a new torch.jit.CompilationUnit of w2_lorenz.py's scripted loop per sample
             (TorchScript compile + the profiling executor's first run of 100,000 steps)
Each row's notes give the steady-state call beside it, so the compile part can be read off.

Usage (run from the peers' py/ folder, or with PEERS_PY pointing at it, so that
`common` imports):  peer_w2_first_call.py numba|torchjit
"""
import os
import sys
import time

sys.path.insert(0, os.environ.get("PEERS_PY", os.getcwd()))
from common import measure, report, header  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "numba"
N = 100_000
SIGMA, RHO, BETA, DT = 10.0, 28.0, 8.0 / 3.0, 0.01


def lorenz_py(x, y, z, n):
    for _ in range(n):
        dx = SIGMA * (y - x)
        dy = x * (RHO - z) - y
        dz = x * y - BETA * z
        x = x + DT * dx
        y = y + DT * dy
        z = z + DT * dz
    return x, y, z


TS_SOURCE = """
def lorenz(s: Tensor, n: int) -> Tensor:
    SIGMA = 10.0
    RHO = 28.0
    BETA = 8.0 / 3.0
    DT = 0.01
    for _ in range(n):
        x, y, z = s.unbind()
        ds = torch.stack([SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z])
        s = s + DT * ds
    return s
"""


def first_calls(make, call, reps, steady_reps=5):
    """reps samples of (make a fresh compiled function, call it once); and the steady state."""
    ts, fn = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        fn = make()
        call(fn)
        ts.append(time.perf_counter() - t0)
    very_first = ts[0]
    ts.sort()
    first = (ts[len(ts) // 2], ts[0], ts[-1], reps)
    steady = measure(lambda: call(fn), reps=steady_reps, warmup=2)
    return first, steady, very_first


if mode == "numba":
    t0 = time.perf_counter()
    import numba
    imported = time.perf_counter() - t0
    header("W2 first call, numba")
    first, steady, very_first = first_calls(lambda: numba.njit(cache=False)(lorenz_py), lambda f: f(1.0, 1.0, 1.0, N), 3)
    report("W2first", f"numba {numba.__version__} njit first call, 100000 steps", first, f"{first[0] * 1e3:.1f} ms",
           f"type inference + LLVM + first run; the process's first {very_first * 1e3:.1f} ms; "
           f"steady-state call {steady[0] * 1e3:.2f} ms; "
           f"a fresh dispatcher per sample; import numba {imported * 1e3:.0f} ms not counted")
elif mode == "torchjit":
    import torch
    torch.set_num_threads(2)
    header("W2 first call, torch.jit")
    s0 = torch.ones(3, dtype=torch.float64)
    first, steady, very_first = first_calls(lambda: torch.jit.CompilationUnit(TS_SOURCE), lambda cu: cu.lorenz(s0, N), 3, 3)
    report("W2first", "torch.jit.script first call, 100000 steps", first, f"{first[0] * 1e3:.1f} ms",
           f"TorchScript compile + first run (profiling executor); the process's first {very_first * 1e3:.1f} ms; "
           f"steady-state call {steady[0] * 1e3:.1f} ms; "
           "a fresh torch.jit.CompilationUnit per sample; torch threads=2")
else:
    raise SystemExit(f"unknown mode {mode}")
