"""Formats the raw output of bench/run.sh into bench/RESULTS.md.

Input lines (rune's programs and the peers' share the format):
  W# | implementation | median t (min t, max t, n=k) | derived | notes
  # ...            checks, versions, skips; "# --- LABEL" names the program that follows
"""
import argparse
import os
import datetime
import re
import shutil
import subprocess

W1_TARGET_NS = 200.0
W3_ADD_TARGET = 0.80  # rune a+b GB/s (12 B/elem) over copy GB/s (8 B/elem)
W2_TARGET = 1.2  # issue 27: rune jit(scan) time over the plain C++ loop's (same run), and bitwise equal
W2GRAD_TARGET = 1.5  # issue 27: rune jit(grad) time over the hand-written reverse loop's
W3C_COPY_TARGET = 3.0  # rune jit chain time over the copy loop's (all threads)
W3C_NUMEXPR_TARGET = 5.0  # numexpr's time over rune jit chain's (all threads)
W6_TARGET_NS = 250.0
W8_TARGET = 2.0  # every W8 rune row's time over its plain C++ baseline's (same program, same run)
W8_NATIVE_TARGET = 1.5  # issue 27 (machine code): the flight within 1.5x of the plain loop
W3C_NATIVE_COPY_TARGET = 2.0  # issue 27 (machine code): the jit chain within 2x of the copy loop (all threads)
W8_DIFF_TARGET = 1e-9  # the flight's final positions against the plain loop's, max abs difference
W9_SMALL_US = 1.0  # issue 30: psum from compiled code within 1 us of MPI_Allreduce up to 8 KiB
W9_LARGE_RATIO = 1.1  # ... and within 1.1x of it from 128 KiB
W9_DDP_EXCHANGE = 1.2  # data-parallel step within the step alone plus 1.2x the gradient's MPI_Allreduce
W2_STEPS = 100_000
W2_GRAD_STEPS = 1_000
N = 10_000_000

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


class Row:
    def __init__(self, program, fields):
        self.program = program
        self.workload, self.impl, self.time_field, self.derived, self.notes = (fields + [""] * 5)[:5]
        m = re.match(r"median ([\d.]+) (s|ms|us|ns) \(min ([\d.]+) (s|ms|us|ns), max ([\d.]+) (s|ms|us|ns), n=(\d+)\)",
                     self.time_field)
        self.t = float(m.group(1)) * UNITS[m.group(2)] if m else None
        self.lo = float(m.group(3)) * UNITS[m.group(4)] if m else None
        self.hi = float(m.group(5)) * UNITS[m.group(6)] if m else None
        self.n = int(m.group(7)) if m else None

    def num(self, pattern):
        m = re.search(pattern, self.derived)
        return float(m.group(1)) if m else None

    @property
    def ns_op(self):
        return self.num(r"([\d.]+) ns/op")

    @property
    def gbs(self):
        return self.num(r"([\d.]+) GB/s")

    @property
    def bytes_per_elem(self):
        b = self.num(r"\((\d+) B/elem\)")
        if b is None and "effective" in self.derived:
            b = 8.0
        return b

    @property
    def threads(self):
        m = re.search(r"\((\d+) thr\)|threads=(\d+)\)", self.impl)
        if m:
            return int(m.group(1) or m.group(2))
        if self.impl.startswith("numpy"):
            return 1
        return None

    @property
    def build(self):
        first = self.notes.split(";")[0].strip()
        return first if first.startswith("g++") else ""

    def spread(self):
        return f"{fmt_t(self.lo)} .. {fmt_t(self.hi)}, n={self.n}"


def fmt_t(sec):
    if sec is None:
        return "–"
    if sec >= 1.0:
        return f"{sec:.3f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.3f} ms"
    if sec >= 1e-6:
        return f"{sec * 1e6:.3f} us"
    return f"{sec * 1e9:.1f} ns"


def parse(path):
    rows, checks, program, rnd = [], [], "", 1
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"# ==== round (\d+)", line)
            if m:
                rnd = int(m.group(1))
            if line.startswith("# --- "):
                program = line[6:]
            elif line.startswith("#"):
                checks.append(line)
            elif re.match(r"^W\w* \| ", line):
                r = Row(program, line.split(" | "))
                r.round = rnd
                rows.append(r)
    return rows, checks


def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    m = len(v) // 2
    return v[m] if len(v) % 2 else 0.5 * (v[m - 1] + v[m])


class Agg:
    """One row over the rounds: the median of the rounds' medians (and of each derived
    figure), with the lowest and highest round median."""

    def __init__(self, rs):
        self.rs = rs
        first = rs[0]
        self.program, self.workload, self.impl, self.notes = first.program, first.workload, first.impl, first.notes
        self.derived = first.derived
        ts = [r.t for r in rs if r.t is not None]
        self.t = median(ts)
        self.lo = min(ts) if ts else None
        self.hi = max(ts) if ts else None
        self.n = first.n
        self.ns_op = median([r.ns_op for r in rs])
        self.gbs = median([r.gbs for r in rs])
        self.bytes_per_elem = first.bytes_per_elem
        self.threads = first.threads
        self.build = first.build

    def spread(self):
        if len(self.rs) == 1:
            return f"min {fmt_t(self.rs[0].lo)}, max {fmt_t(self.rs[0].hi)}, n={self.n}"
        return f"rounds {fmt_t(self.lo)} .. {fmt_t(self.hi)}; {len(self.rs)} rounds x n={self.n}"

    def by_round(self):
        return {r.round: r for r in self.rs}


def aggregate(rows):
    groups, order = {}, []
    for r in rows:
        key = (r.workload, r.impl, r.program, r.notes.split(";")[0])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)
    return [Agg(groups[k]) for k in order]


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # noqa: BLE001
        return ""


def find(rows, workload, pred):
    for r in rows:
        if r.workload == workload and pred(r):
            return r
    return None


def ratio(a, b, digits=2):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.{digits}f}"


# ---------------- W2
def per_round_ratios(a, b, key=lambda r: r.t):
    """a's figure over b's in each round where both ran."""
    ar, br = a.by_round(), b.by_round()
    return [key(ar[k]) / key(br[k]) for k in sorted(ar) if k in br and key(ar[k]) and key(br[k])]


def vs(peer, rune, who="rune"):
    """'rune is Nx faster' (or slower): the peer's time (or cost) against rune's."""
    q = peer / rune if peer >= rune else rune / peer
    n = f"{q:.2f}" if q < 10 else (f"{q:.1f}" if q < 100 else f"{q:.0f}")
    return f"{who} is {n}x {'faster' if peer >= rune else 'slower'}"


def times(q):
    return f"{q:.1f}x" if q < 100 else f"{q:.0f}x"


def fmt_step(ns):
    if ns is None:
        return "–"
    if ns >= 1e4:
        return f"{ns / 1e3:.1f} us"
    return f"{ns:.2f} ns" if ns < 100 else f"{ns:.0f} ns"


def table_rows(w, rows, workload, highlight, cells):
    """A table line per measured row of `workload`: its name (bold for `highlight`), then cells(r)."""
    for r in rows:
        if r.workload != workload or r.t is None:
            continue
        name = f"**{r.impl}**" if r is highlight else r.impl
        w(f"| {name} | {cells(r)} |")


def against_peers(w, rows, workload, peers, describe):
    """"Against, in this run: ..." for the peers' rows of `workload` found by (label, predicate);
    describe(label, row) gives a peer's text, or None when the row has no figure."""
    parts = []
    for label, pred in peers:
        p = find(rows, workload, pred)
        text = describe(label, p) if p else None
        if text:
            parts.append(text)
    if parts:
        w("")
        w("Against, in this run: " + "; ".join(parts) + ".")


def w2_states(checks):
    """The final states after 100,000 steps printed by the programs (# W2 final state (label): [x, y, z])."""
    out = []
    for c in checks:
        m = re.match(r"# W2 final state \(([^)]*)\): \[([^\]]*)\]", c)
        if m and "after 1000 steps" not in m.group(1):
            try:
                v = tuple(float(t) for t in m.group(2).split(","))
            except ValueError:
                continue
            if (m.group(1), v) not in out:
                out.append((m.group(1), v))
    return out


def w2_section(rows, checks, w):
    w("## W2: Lorenz-63, explicit Euler, dt = 0.01, float64, 100,000 steps from (1, 1, 1)")
    w("")
    w("Every implementation performs the IEEE operations of the peers' `w2_floor.cpp` in the same order: "
      "`dx = σ(y − x); dy = x(ρ − z) − y; dz = xy − βz; x = x + dt·dx; ...` (σ = 10, ρ = 28, β = 8/3), so "
      "final states compare bit for bit. rune (`bench/w2_lorenz.cpp`): `rune::jit` of a `rune::scan` whose "
      "carry is three 0-d float64 tensors (a `std::tuple`) and which emits nothing per step "
      "(`std::tuple<>`), a scan by length (`rune::scan(f, init, 100000)`). Its floor is the "
      "plain C++ scalar loop compiled in the same program with the project's flags (g++ -O3 "
      "`-ffp-contract=off`, `noinline`) and measured in the same run; the peers' own floor `w2_floor` "
      "(g++ -O2 -ffp-contract=off) runs beside it. The libtorch, PyTorch and torch.jit.script peers take "
      "tens of seconds a run and run in round 1 only.")
    w("")
    w("rune's compiled rows run on the executor `rune::jit` uses: the bytecode VM, whose scans of scalar steps "
      "(all of these) are promoted to machine code once they have run 1,000 rows (docs/vm.md, \"Machine code\"). "
      "The rows marked `on the VM alone` are the same program run again with `RUNE_NATIVE=off`. "
      "The verdicts below are as measured, met or not.")
    w("")
    rj = find(rows, "W2", lambda r: r.impl.startswith("rune jit(scan), carry = 3"))
    fl = find(rows, "W2", lambda r: r.impl.startswith("plain C++ scalar loop (in bench_w2)"))
    if rj and fl and rj.t and fl.t:
        q = rj.t / fl.t
        eq = all("bitwise equal: yes" in r.notes for r in rj.rs)
        met = q <= W2_TARGET and eq
        per = [times(x) for x in per_round_ratios(rj, fl)]
        w(f"**rune jit(scan): {rj.t / W2_STEPS * 1e9:.1f} ns/step = {times(q)} the plain C++ loop "
          f"({fl.t / W2_STEPS * 1e9:.2f} ns/step, same program, same run); final state bitwise equal to the "
          f"loop's: {'yes' if eq else 'NO'}. Target (issue 27, machine code: within {W2_TARGET:.1f}x and bitwise equal): "
          f"{'MET' if met else 'NOT MET'}.**" + (f" (per round: {', '.join(per)})" if len(per) > 1 else ""))
        against_peers(w, rows, "W2", (
            ("the peers' C++ floor `w2_floor` (g++ -O2)", lambda r: r.impl.startswith("plain C++ scalar loop (floor)")),
            ("Numba njit", lambda r: r.impl.startswith("numba")),
            ("numpy", lambda r: r.impl.startswith("numpy loop")),
            ("torch.jit.script", lambda r: r.impl.startswith("torch.jit.script")),
            ("libtorch C++ eager", lambda r: r.impl.startswith("libtorch C++ eager loop")),
            ("PyTorch Python eager", lambda r: r.impl.startswith("PyTorch Python eager loop"))),
            lambda label, p: p.t and f"{label} {fmt_step(p.t / W2_STEPS * 1e9)}/step ({vs(p.t, rj.t)})")
    else:
        w("**rune: no W2 result (see the raw output below).**")
    w("")
    r3 = find(rows, "W2", lambda r: "carry = one float64[3]" in r.impl)
    if r3 and rj and r3.t and rj.t:
        q3 = r3.t / rj.t
        eq3 = all("bitwise equal: yes" in r.notes for r in r3.rs)
        w(f"**The same scan over one `float64 [3]` state (`nx::get`, `nx::stack`: small tensors as scalars): "
          f"{r3.t / W2_STEPS * 1e9:.1f} ns/step = {times(q3)} the three-scalar carry; final state bitwise equal: "
          f"{'yes' if eq3 else 'NO'}. Target (issue 26: within 2x of the three-scalar carry and bitwise equal): "
          f"{'MET' if q3 <= 2 and eq3 else 'NOT MET'}.**")
        w("")
    states = w2_states(checks)
    ref = next((v for label, v in states if label.startswith("plain C++ loop")), None)
    if states and ref:
        same = [label for label, v in states if v == ref]
        differ = [label for label, v in states if v != ref]
        w(f"Final state of the plain C++ loop: [{ref[0]!r}, {ref[1]!r}, {ref[2]!r}]. Bit for bit the same "
          f"(`# W2 final state` lines): " + "; ".join(f"`{x}`" for x in same)
          + (". **Different**: " + "; ".join(f"`{x}`" for x in differ) if differ else "") + ".")
        w("")
    w("| implementation | per step | ratio (time ÷ the plain C++ loop's in bench_w2) | time per 100,000 steps (range) | program | notes |")
    w("|---|---|---|---|---|---|")
    table_rows(w, rows, "W2", rj,
               lambda r: f"{fmt_step(r.t / W2_STEPS * 1e9)} | {ratio(r.t, fl.t if fl else None, 1)} | "
                         f"{fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes}")
    w("")

    w("### W2grad: d x_1000 / d (x0, y0, z0) through 1,000 steps")
    w("")
    w("rune: `rune::jit(rune::grad(f))` with f(initial state) = x after 1,000 steps of the same scan "
      "(reverse mode through the scan). Its floor: the hand-written reverse loop over the stored trajectory "
      "(as the peers' `w2_floor` grad_rev) compiled in the same program; rune's gradient must agree with it "
      "to 1e-9 relative (the order of the adjoint's operations differs, so not bit for bit).")
    w("")
    rg = find(rows, "W2grad", lambda r: r.impl.startswith("rune jit(grad"))
    hr = find(rows, "W2grad", lambda r: r.impl.startswith("plain C++ hand-written reverse loop (in bench_w2)"))
    if rg and hr and rg.t and hr.t:
        q = rg.t / hr.t
        per = [times(x) for x in per_round_ratios(rg, hr)]
        w(f"**rune jit(grad): {rg.t / W2_GRAD_STEPS * 1e9:.0f} ns/step = {times(q)} the hand-written reverse loop "
          f"({hr.t / W2_GRAD_STEPS * 1e9:.2f} ns/step). Target (issue 27, machine code: within {W2GRAD_TARGET:.1f}x): "
          f"{'MET' if q <= W2GRAD_TARGET else 'NOT MET'}.**" + (f" (per round: {', '.join(per)})" if len(per) > 1 else ""))
        against_peers(w, rows, "W2grad", (
            ("PyTorch autograd, Python eager", lambda r: r.impl.startswith("PyTorch autograd, Python eager")),
            ("libtorch C++ autograd", lambda r: "libtorch C++ autograd" in r.impl),
            ("functorch.grad", lambda r: r.impl.startswith("functorch.grad"))),
            lambda label, p: p.t and f"{label} {fmt_step(p.t / W2_GRAD_STEPS * 1e9)}/step ({vs(p.t, rg.t)})")
    else:
        w("**rune: no W2grad result (see the raw output below).**")
    w("")
    grads = [c[2:] for c in checks if c.startswith("# W2 grad d x_1000")]
    if grads:
        w("Gradients printed by the programs (`%.17g`):")
        w("")
        w("```")
        for g in dict.fromkeys(grads):
            w(g)
        w("```")
        w("")
    w("| implementation | per step | ratio (time ÷ the reverse loop's in bench_w2) | time per 1,000 steps (range) | program | notes |")
    w("|---|---|---|---|---|---|")
    table_rows(w, rows, "W2grad", rg,
               lambda r: f"{fmt_step(r.t / W2_GRAD_STEPS * 1e9)} | {ratio(r.t, hr.t if hr else None, 1)} | "
                         f"{fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes}")
    w("")

    first = [r for r in rows if r.workload == "W2first" and r.t is not None]
    w("### W2 first calls (information, no target)")
    w("")
    w("The cost before the first result: trace (or type inference) + compile + the first run, a fresh "
      "compiled function per sample (median of the samples; the notes give the process's very first one and "
      "the steady-state call, so the compile part can be read off). Numba's import is not counted.")
    w("")
    if first:
        w("| implementation | first call | median (range) | program | notes |")
        w("|---|---|---|---|---|")
        for r in first:
            w(f"| {r.impl} | {r.t * 1e3:.1f} ms | {fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    else:
        w("No first-call rows (see the raw output below).")
    w("")


# ---------------- W3 (c)
JIT_PEERS = ("numexpr", "numba")


def is_w3_compiled(r):
    return r.workload == "W3" and (r.impl.startswith(("rune jit", "rune VM alone: jit")) or r.impl.startswith(JIT_PEERS))


def w3c_section(rows, copies, full, w):
    w("## W3 (c): the same chain compiled, `rune::jit` of `tanh(x * 2 + 1) * x - exp(-x * x)`, 10,000,000 float32")
    w("")
    w(f"rune: `rune::jit` of the expression, traced once, a new result per call (`bench_w3`), with {full} threads "
      f"and with 1; its kernel as machine code (a block loop, docs/vm.md \"Machine code\"), and beside it the same "
      f"with `JitOptions::native_after = -1` (the VM alone), in alternating rounds. The peers: numexpr (`numexpr.evaluate`, its register VM over cache-sized blocks, 1 and {full} "
      "threads) and Numba's parallel fused loop, from the shared peers' `w_jit_peers.py w3`. Targets: the "
      f"compiled chain within {W3C_COPY_TARGET:.0f}x of the copy loop's time at {full} threads (the headline copy "
      f"of W3 (a)), and at least {W3C_NUMEXPR_TARGET:.0f}x faster than numexpr ({full} threads, new result). An "
      "executor that runs the chain one primitive at a time makes 8 passes over memory with a result each, "
      "and cannot come near the copy loop; only a fused loop can. The verdicts below are as measured.")
    w("")
    rjs = {th: find(rows, "W3", lambda r, th=th: r.impl.startswith("rune jit expression") and r.threads == th)
           for th in thread_counts(full)}
    nes = {th: find(rows, "W3", lambda r, th=th: r.impl.startswith(f"numexpr fused chain ({th} thr, new result)"))
           for th in thread_counts(full)}
    rj = rjs.get(full)
    if rj and rj.t:
        c, ne = copies.get(full), nes.get(full)
        if c and c.t:
            q = rj.t / c.t
            w(f"- **{full} thr: rune jit {rj.t * 1e3:.2f} ms/call = {q:.1f}x the copy loop ({c.t * 1e3:.2f} ms); "
              f"target (within {W3C_COPY_TARGET:.0f}x): {'MET' if q <= W3C_COPY_TARGET else 'NOT MET'}; "
              f"issue 27's (machine code, within {W3C_NATIVE_COPY_TARGET:.0f}x): "
              f"{'MET' if q <= W3C_NATIVE_COPY_TARGET else 'NOT MET'}.**")
            vm = find(rows, "W3", lambda r: r.impl.startswith("rune VM alone: jit expression") and r.threads == full)
            if vm and vm.t:
                w(f"- **{full} thr: the VM alone {vm.t * 1e3:.2f} ms/call; machine code {rj.t / vm.t:.2f}x its time; "
                  f"issue 27's target (never slower than the VM): {'MET' if rj.t <= vm.t else 'NOT MET'}.**")
        else:
            w(f"- **{full} thr: no copy-loop row to compare with; target not assessed.**")
        if ne and ne.t:
            q = ne.t / rj.t
            w(f"- **{full} thr: numexpr {ne.t * 1e3:.2f} ms/call ({vs(ne.t, rj.t)}); target (at least {W3C_NUMEXPR_TARGET:.0f}x "
              f"faster): {'MET' if q >= W3C_NUMEXPR_TARGET else 'NOT MET'}.**")
        else:
            w(f"- **{full} thr: no numexpr row (numexpr or Numba not installed?); target not assessed.**")
        r1, c1, ne1 = rjs.get(1), copies.get(1), nes.get(1)
        if r1 and r1.t and full != 1:
            parts = []
            if c1 and c1.t:
                parts.append(f"{r1.t / c1.t:.1f}x the copy loop ({c1.t * 1e3:.2f} ms)")
            if ne1 and ne1.t:
                parts.append(f"numexpr {ne1.t * 1e3:.2f} ms ({vs(ne1.t, r1.t)})")
            w(f"- 1 thr (informative): rune jit {r1.t * 1e3:.2f} ms/call" + (": " + "; ".join(parts) if parts else "") + ".")
        eager = find(rows, "W3", lambda r: r.impl.startswith("rune nx eager expression") and r.threads == full)
        if eager and eager.t:
            w(f"- rune's eager expression ({full} thr) {eager.t * 1e3:.2f} ms: compiling changes the time by "
              f"{(rj.t / eager.t - 1) * 100:+.0f}%.")
    else:
        w("**rune: no compiled W3 result (see the raw output below).**")
    w("")
    w(f"| implementation | ms/call | ns/elem | effective GB/s | ratio to rune jit {full} thr (time ÷ rune's) | median (range) | program | notes |")
    w("|---|---|---|---|---|---|---|---|")
    table = [r for r in rows if is_w3_compiled(r)]
    table += [copies[th] for th in thread_counts(full) if th in copies]
    for r in table:
        name = f"**{r.impl}**" if r.impl.startswith("rune") else r.impl
        gb = f"{r.gbs:.3g}" if r.gbs is not None and r.workload == "W3" and "effective" in r.derived else "–"
        w(f"| {name} | {r.t * 1e3:.2f} | {r.t / N * 1e9:.2f} | {gb} | {ratio(r.t, rj.t if rj else None)} | "
          f"{fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    w("")


# ---------------- W6
def w6_ns(r):
    """ns per call: from the derived figure (ns/call or us/call), the median over the rounds."""
    def one(x):
        v = x.num(r"([\d.]+) ns/call")
        if v is None:
            v = x.num(r"([\d.]+) us/call")
            v = v * 1e3 if v is not None else None
        return v
    return median([one(x) for x in r.rs])


def w6_section(rows, w):
    w("## W6: the cost of a compiled call, `x * 2 + 1` on a float64[4]")
    w("")
    w("rune: `rune::jit([](nx::Tensor x) { return x * 2. + 1.; })` called with the same argument, 10,000 calls "
      "per sample after 100 warm-up calls (one trace, then a cache hit per call; `bench/w6_call.cpp`); "
      "ns/call is the median sample over 10,000. The peers: a torch.jit.script function and module called "
      "from Python (`w6_call.py`), the saved TorchScript module called from libtorch C++ (`w6_libtorch`), "
      "and a Numba njit function called from Python (`w_jit_peers.py w6`, including the Python call and the "
      "result's allocation). rune's fixed cost per call: the key of the arguments, the cache look-up and the "
      "executor's set-up and result, on top of the two ops.")
    w("")
    rj = find(rows, "W6", lambda r: r.impl.startswith("rune jit("))
    if rj and w6_ns(rj) is not None:
        ns = w6_ns(rj)
        per = [f"{v:.0f}" for v in (x.num(r"([\d.]+) ns/call") for x in rj.rs) if v is not None]
        w(f"**rune: {ns:.0f} ns/call; target < {W6_TARGET_NS:.0f} ns: {'MET' if ns < W6_TARGET_NS else 'NOT MET'}.**"
          + (f" (per round: {', '.join(per)} ns/call)" if len(per) > 1 else ""))
        against_peers(w, rows, "W6", (
            ("rune eager (the same two ops, no jit)", lambda r: r.impl.startswith("[extra] rune nx eager")),
            ("libtorch C++ TorchScript module", lambda r: r.impl.startswith("libtorch C++ torch::jit::load")),
            ("torch.jit.script from Python", lambda r: r.impl.startswith("torch.jit.script function called")),
            ("Numba njit from Python", lambda r: r.impl.startswith("numba"))),
            lambda label, p: w6_ns(p) and
            f"{label} {w6_ns(p):.0f} ns ({vs(w6_ns(p), ns, 'the jit call' if 'eager' in label else 'rune')})")
        fastest = [x.lo for x in rj.rs if x.lo is not None]
        if fastest:
            w("")
            w(f"Noise: on this VM one process's time per call moves between two levels, about 2x apart, every "
              f"50-100 ms, on either core and with nothing else running (measured in session 6 with "
              f"OPENBLAS_NUM_THREADS=1, 0.99 CPUs used): other load on the host. The fastest sample of this run "
              f"was {min(fastest) / 10_000 * 1e9:.0f} ns/call; the verdict uses the median, as every other row.")
    else:
        w("**rune: no W6 result (see the raw output below).**")
    w("")
    w("| implementation | ns/call | ratio (ns ÷ rune jit's) | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|---|")
    base = w6_ns(rj) if rj else None
    for r in rows:
        if r.workload != "W6":
            continue
        v = w6_ns(r)
        name = f"**{r.impl}**" if r is rj else r.impl
        w(f"| {name} | {f'{v:.0f}' if v is not None else r.derived} | {ratio(v, base)} | {fmt_t(r.t)} ({r.spread()}) | "
          f"{r.program} | {r.notes} |")
    w("")


# ---------------- W7
def w7_ns(r):
    """ns per frame, the median over the rounds."""
    return median([x.num(r"([\d.]+) ns/frame") for x in r.rs])


def w7_section(rows, w):
    w("## W7: a game's frame with rune embedded")
    w("")
    w("The embedding example (`examples/embed/`): a chain of masses on springs, its step traced with "
      "`rune::jit`, saved, loaded with `rune::load` and run every frame in place on the game's own arrays "
      "(`Loaded::into` over `nx::borrow`: no copy in, no allocation); the same step as a plain C++ loop on the "
      "same arrays is the baseline (bits checked equal), and the difference is what rune costs a frame "
      "(`bench/w7_frame.cpp`, 1,000 frames per sample). [extra] rows: the C API's `rune_program_run` on the "
      "same arrays, and a `rune::jit` call returning new tensors. No target was set for this workload.")
    w("")
    for n in (32, 1024):
        suffix = f", {n} masses"
        rl = find(rows, "W7", lambda r: r.impl == "rune Loaded::into frame" + suffix)
        pc = find(rows, "W7", lambda r: r.impl == "plain C++ step" + suffix)
        if rl and pc and w7_ns(rl) is not None and w7_ns(pc) is not None:
            a, b = w7_ns(rl), w7_ns(pc)
            w(f"- **{n} masses: rune {a:.0f} ns/frame, plain C++ {b:.0f} ns/frame: rune adds {a - b:.0f} ns "
              f"a frame ({times(a / b)} the plain step).**")
        else:
            w(f"- **{n} masses: no W7 result (see the raw output below).**")
    w("")
    w("| implementation | ns/frame | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|")
    table_rows(w, rows, "W7", None,
               lambda r: f"{f'{w7_ns(r):.0f}' if w7_ns(r) is not None else r.derived} | {fmt_t(r.t)} ({r.spread()}) | "
                         f"{r.program} | {r.notes}")
    w("")


# ---------------- W8
W8_NUM = r"([\d.]+(?:e[+-]?\d+)?)"
# (rune row, its plain C++ baseline, what the verdict names); the per-primitive pairs are added below.
W8_PAIRS = [
    ("rune jit(scan), 1000 steps", "plain C++ loop, 1000 steps", "the flight: rune::jit of a rune::scan of 1,000 steps"),
    ("rune Loaded::into frame", "plain C++ step, one frame", "one frame through Loaded::into on the game's arrays"),
    ("rune jit(vmap(scan)) over 64 stiffnesses, one call",
     "plain C++ loop, 64 cloths one after another, 1000 steps each",
     "rune::vmap of the flight over 64 stiffnesses, one compiled call"),
]
W8_EXTRA = [("[extra] rune jit(scan), 64 calls one after another",
             "plain C++ loop, 64 cloths one after another, 1000 steps each")]
W8_PRIMS = ("nx::take", "nx::scatter_add", "nx::segment_sum")
W8_SIZES = (1097, 1000000)


def w8_pairs():
    pairs = list(W8_PAIRS)
    for n in W8_SIZES:
        for p in W8_PRIMS:
            pairs.append((f"rune jit({p}), n={n}", f"plain C++ {p} loop, n={n}", f"one compiled call of `{p}`, n = {n:,}"))
    return pairs


def w8_figure(r, pattern, field="notes"):
    """The largest value of `pattern` in a field of r's rounds (None when no round has it)."""
    v = []
    for x in r.rs:
        m = re.search(pattern, getattr(x, field))
        if m:
            v.append(float(m.group(1)))
    return max(v) if v else None


def w8_unit(r):
    """(seconds per step, frame or call, the unit) from the derived figure, at the median over the rounds."""
    first = r.rs[0]
    m = re.match(r"([\d.]+) (s|ms|us|ns)/([\w-]+)", first.derived)
    if not m or not first.t or r.t is None:
        return None, ""
    return r.t * float(m.group(1)) * UNITS[m.group(2)] / first.t, m.group(3)


def w8_section(rows, w):
    w("## W8: a cloth of 300 masses and 1,097 springs (gathers and scatters by index)")
    w("")
    w("A 20 x 15 grid of masses (spacing 0.1, float64 positions and velocities [300, 2]), tilted and dropped "
      "onto the ground (a penalty contact through `nx::where`), held by 1,097 springs (structural and both "
      "shear diagonals) with int32 end indices a, b: each step gathers the springs' ends (`nx::take`), "
      "computes their forces and scatters them back onto the masses (`nx::segment_sum` by a and by b), "
      "dt = 1e-3 (`bench/w8_cloth.cpp`). The baseline is the same step as a plain C++ loop in the same "
      "program (one pass over the springs, F[a] += f, F[b] -= f, then one over the masses), so its sums "
      "are ordered differently: results agree to rounding, not to the bit. Rows: the flight of 1,000 steps "
      "(`rune::jit` of a `rune::scan`); one frame through `rune::Loaded::into` in place on the game's arrays "
      "(`nx::borrow`), with the allocations per frame in the steady state (operator new and the malloc "
      "family, counted by the program itself); `rune::vmap` of the flight over 64 stiffnesses in one "
      "compiled call against the 64 plain flights one after another ([extra]: 64 compiled calls); and one "
      "compiled call of each of `nx::take`, `nx::scatter_add` and `nx::segment_sum` on rows of [n, 2] "
      "float64 by random int32 indices, against a plain loop doing the same reads and writes into a buffer "
      "allocated once. Targets: every rune row within 2x its baseline (time ÷ the baseline's, medians of "
      "the same run), the flight's final positions within 1e-9 of the plain loop's, 0 allocations a frame. "
      "The step's two fused kernels (the springs', the masses') are in rows of two float64 and run as machine "
      "code once promoted (docs/vm.md, \"Machine code\"); under the vmap the springs' gathered rows come in "
      "slabs, one per lane, and their kernels stay on the VM (the masses' is machine code).")
    w("")
    if not any(r.workload == "W8" for r in rows):
        w("**rune: no W8 result (see the raw output below).**")
        w("")
        return
    base_of = {}
    found = False
    for rune_impl, plain_impl, what in w8_pairs():
        rj = find(rows, "W8", lambda r, i=rune_impl: r.impl == i)
        pl = find(rows, "W8", lambda r, i=plain_impl: r.impl == i)
        if not (rj and pl and rj.t and pl.t):
            w(f"- **{what}: no W8 result (see the raw output below).**")
            continue
        found = True
        base_of[rune_impl] = pl
        q = rj.t / pl.t
        per = [times(x) for x in per_round_ratios(rj, pl)]
        (a, unit), (b, _) = w8_unit(rj), w8_unit(pl)
        each = f"{fmt_t(a)}/{unit} against {fmt_t(b)}/{unit}" if a is not None and b is not None else \
            f"{fmt_t(rj.t)} against {fmt_t(pl.t)} a sample"
        text = f"{what}: {each}, {times(q)} its plain C++ baseline; target within " \
               f"{W8_TARGET:.0f}x: {'MET' if q <= W8_TARGET else 'NOT MET'}"
        if rune_impl.startswith("rune jit(scan), 1000"):
            text += f"; issue 27's target (machine code) within {W8_NATIVE_TARGET:.1f}x: " + (
                "MET" if q <= W8_NATIVE_TARGET else "NOT MET (its kernels run as machine code: docs/design.md, The machine-code tier)")
            d = w8_figure(rj, r"final positions vs the plain loop " + W8_NUM)
            text += "; final positions within 1e-9 of the plain loop's: " + (
                f"{'MET' if d <= W8_DIFF_TARGET else 'NOT MET'} (max abs difference {d:.3g})" if d is not None
                else "NOT MET (no figure)")
        if rune_impl == "rune Loaded::into frame":
            a = w8_figure(rj, W8_NUM + r" allocations/frame", "derived")
            text += "; 0 allocations a frame: " + (
                f"{'MET' if a == 0 else 'NOT MET'} ({a:g} a frame)" if a is not None else "NOT MET (no figure)")
        w(f"- **{text}.**" + (f" (per round: {', '.join(per)})" if len(per) > 1 else ""))
    for rune_impl, plain_impl in W8_EXTRA:
        pl = find(rows, "W8", lambda r, i=plain_impl: r.impl == i)
        if pl:
            base_of[rune_impl] = pl
    if not found:
        w("")
        return
    w("")
    w("| implementation | per step, frame or call | ratio (time ÷ its plain C++ baseline's) | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|---|")
    for r in rows:
        if r.workload != "W8" or r.t is None:
            continue
        b = base_of.get(r.impl)
        name = f"**{r.impl}**" if r.impl in base_of and not r.impl.startswith("[extra]") else r.impl
        a, unit = w8_unit(r)
        w(f"| {name} | {f'{fmt_t(a)}/{unit}' if a is not None else r.derived} | {ratio(r.t, b.t if b else None)} | {fmt_t(r.t)} ({r.spread()}) | "
          f"{r.program} | {r.notes} |")
    w("")


# ---------------- W4
W4_PASSIVE = "[OMP_WAIT_POLICY=PASSIVE]"


def w4_kind(r):
    if r.workload == "W4mm":
        return "matmul"
    if "forward only" in r.impl:
        return "forward"
    if "SGD" in r.impl or "training step" in r.impl:
        return "step"
    return "gradient"


def w4_ms(r):
    """ms per step (or per call) over the rounds: the median of the rounds' figures."""
    if r.workload == "W4mm":
        return r.t * 1e3 if r.t is not None else None
    return median([x.num(r"([\d.]+) ms/(?:step|call)") for x in r.rs])


def w4_gflops(r):
    return median([x.num(r"([\d.]+) GFLOP/s") for x in r.rs])


def w4_per_round(peer, rune):
    """peer time / rune time in each round where both ran (the same round: one after the other)."""
    pr, rr = peer.by_round(), rune.by_round()
    out = []
    for k in sorted(pr):
        if k in rr:
            a = pr[k].num(r"([\d.]+) ms/(?:step|call)")
            b = rr[k].num(r"([\d.]+) ms/(?:step|call)")
            if a and b:
                out.append(f"{a / b:.2f}")
    return out


def w4_vs(label, peer, rune):
    if not peer or not rune:
        return None
    a, b = w4_ms(peer), w4_ms(rune)
    if not a or not b:
        return None
    q = a / b
    verdict = f"rune {q:.2f}x faster" if q >= 1 else f"rune {1 / q:.2f}x slower"
    per = w4_per_round(peer, rune)
    rounds = f"; per round {', '.join(per)}" if len(per) > 1 else ""
    return f"{label} {a:.3f} ms: ratio {q:.2f} ({verdict}{rounds})"


def w4_section(rows, checks, machine, full, w):
    w("## W4: the gradient of a 2-layer MLP loss, and a training step, float32")
    w("")
    w("The peers' W4 raw-tensor model: `h = tanh(x @ W1 + b1)`, `y = h @ W2 + b2`, `loss = mean((y - t)^2)`, "
      "batch 128, 784 → 256 → 10, x and t standard normal (fixed seed), W1 and W2 scaled by 1/sqrt(fan-in), "
      "zero biases. (a) the gradient alone: `rune::grad(loss, params)` with params a `RUNE_TREE` struct of "
      "the four tensors (`bench/w4_mlp.cpp`), against PyTorch eager autograd's `torch.autograd.grad` from "
      "Python (`bench/peer_w4_grad.py`) and from libtorch C++ (`bench/peer_w4_grad_libtorch.cpp`); "
      "(b) a training step: `rune::value_and_grad` then manual SGD (lr 0.01) against the peers' "
      "`w4_mlp.py` and `w4_libtorch` (raw tensors + manual SGD, and `nn.Sequential` + `optim.SGD`). "
      "Each figure is per step (or per gradient call), from samples of 50. GFLOP/s counts the peers' matmul "
      "FLOPs per step, forward plus dW1, dW2 and dh: 2·B·(D·H + H·O) + 2·(D·H·B + H·O·B + B·O·H) = "
      "104.7 MFLOP, for a gradient and a step alike.")
    w("")
    w("Threads: rune's matmuls call OpenBLAS (0.3.21) on the calling thread, a product of at least 2^24 "
      f"multiply-adds cut into pieces run on oneTBB, and its elementwise loops run on oneTBB ({full} threads); "
      f"PyTorch runs torch threads={full} (OpenMP) and the same OpenBLAS. In the default "
      f"environment libgomp's idle threads spin and compete with OpenBLAS's threads for the {machine.nproc} cores, which "
      "slows PyTorch badly on this machine (the peers' README, W4); so every PyTorch peer also runs with "
      f"`OMP_WAIT_POLICY=PASSIVE` (rows tagged {W4_PASSIVE}), its better environment. rune uses no OpenMP. "
      "**Ratio = the peer's time ÷ rune's time** for the same work (above 1: rune is faster). Target "
      "(issue 9): the compiled training step (c), `rune::jit` of `value_and_grad` and the SGD update with "
      "the parameters donated, faster than tuned PyTorch (the fastest `OMP_WAIT_POLICY=PASSIVE` step) in "
      "the same run.")
    w("")
    rg = find(rows, "W4", lambda r: r.impl.startswith("rune grad"))
    rs = find(rows, "W4", lambda r: r.impl.startswith("rune training step"))
    rc = find(rows, "W4", lambda r: r.impl.startswith("rune compiled training step"))
    rf = find(rows, "W4", lambda r: r.impl.startswith("[extra] rune forward only"))
    rmm = find(rows, "W4mm", lambda r: r.impl.startswith("[extra] rune nx::matmul"))

    def peer(prefix, passive):
        return find(rows, "W4", lambda r: r.impl.startswith(prefix) and (W4_PASSIVE in r.impl) == passive)

    if rg:
        w(f"**(a) gradient alone: rune {w4_ms(rg):.3f} ms/call ({w4_gflops(rg):.1f} GFLOP/s).**")
        parts = []
        for label, pre in (("PyTorch Python eager autograd", "PyTorch Python eager autograd grad"),
                           ("libtorch C++ autograd", "libtorch C++ autograd grad")):
            for passive in (False, True):
                v = w4_vs(f"{label}{', OMP_WAIT_POLICY=PASSIVE' if passive else ', default environment'}",
                          peer(pre, passive), rg)
                if v:
                    parts.append(v)
        hw = find(rows, "W4", lambda r: r.impl.startswith("[extra] rune nx hand-written backward"))
        if hw and w4_ms(hw):
            parts.append(f"the same gradient written by hand in plain nx ops {w4_ms(hw):.3f} ms "
                         f"(rune::grad costs {w4_ms(rg) / w4_ms(hw):.2f}x the hand-written pass)")
        for p in parts:
            w(f"- {p}")
    else:
        w("**(a) rune: no W4 gradient result (see the raw output below).**")
    w("")
    if rs:
        w(f"**(b) training step: rune {w4_ms(rs):.3f} ms/step ({w4_gflops(rs):.1f} GFLOP/s).**")
        parts = []
        for label, pre in (("PyTorch Python eager, raw tensors + manual SGD", "[extra] PyTorch Python eager, raw tensors"),
                           ("libtorch C++, raw tensors + manual SGD", "[extra] libtorch C++, raw tensors"),
                           ("PyTorch Python eager, nn.Sequential + optim.SGD", "PyTorch Python eager, nn.Sequential"),
                           ("libtorch C++, nn::Sequential + optim::SGD", "libtorch C++, nn::Sequential")):
            for passive in (False, True):
                v = w4_vs(f"{label}{', OMP_WAIT_POLICY=PASSIVE' if passive else ', default environment'}",
                          peer(pre, passive), rs)
                if v:
                    parts.append(v)
        for p in parts:
            w(f"- {p}")
    else:
        w("**(b) rune: no W4 training-step result (see the raw output below).**")
    w("")
    if rc:
        tuned = [r for r in rows if r.workload == "W4" and W4_PASSIVE in r.impl and w4_kind(r) == "step"
                 and w4_ms(r)]
        best = min(tuned, key=w4_ms) if tuned else None
        verdict = ""
        if best:
            q = w4_ms(best) / w4_ms(rc)
            verdict = (f"; against the fastest tuned PyTorch step ({best.impl}, {w4_ms(best):.3f} ms): ratio "
                       f"{q:.2f}, target (faster): {'MET' if q > 1 else 'NOT MET'}")
        w(f"**(c) compiled training step: rune {w4_ms(rc):.3f} ms/step ({w4_gflops(rc):.1f} GFLOP/s){verdict}.**")
        for c in checks:
            if c.startswith(("# W4 rune jit first call", "# W4 rune compiled step equals")):
                w(f"- {c[2:]}")
    else:
        w("**(c) rune: no compiled training-step result (see the raw output below).**")
    w("")
    w("| implementation | kind | ms per step or call | GFLOP/s | ratio (time ÷ rune's of the same kind) | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|---|---|---|")
    ref = {"gradient": rg, "step": rs, "forward": rf, "matmul": rmm}
    w4rows = [r for r in rows if r.workload in ("W4", "W4mm")]
    order = {"gradient": 0, "step": 1, "forward": 2, "matmul": 3}
    w4rows.sort(key=lambda r: (order[w4_kind(r)], not r.impl.startswith(("rune", "[extra] rune"))))
    for r in w4rows:
        k = w4_kind(r)
        base = ref.get(k)
        ms = w4_ms(r)
        gf = w4_gflops(r)
        rr = ratio(ms, w4_ms(base) if base else None)
        name = f"**{r.impl}**" if r in (rg, rs, rc) else r.impl
        w(f"| {name} | {k} | {f'{ms:.3f}' if ms else '–'} | {f'{gf:.1f}' if gf else '–'} | {rr} | "
          f"{fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    w("")


# ---------------- W5
def w5_section(rows, peers, full, w):
    w("## W5: Newton's square root on 1,000,000 float64 lanes, each lane stopping on its own")
    w("")
    w("a = linspace(0.5, 10000, 1e6), x0 = a; a lane is done when |x*x - a| < 1e-12*a, at most 100 steps. "
      "rune: `rune::vmap` of a `rune::iterate` whose until is per lane (stopped lanes keep their carry "
      "bit for bit; `bench/w5_newton.cpp` checks the results equal the plain C++ loop's), eager and "
      "compiled (`rune::jit`, run on the bytecode VM; eagerly, the batched iterate is compiled and run on the "
      "VM on each call). The peers: the plain C++ "
      "per-lane early exit (OpenMP), Numba's parallel loop, and the masked loops of PyTorch and NumPy "
      f"(`{peers}`, W5).")
    w("")
    rj = find(rows, "W5", lambda r: r.impl.startswith("rune jit"))
    peers = ((f"the plain C++ early exit ({full} thr)", lambda r: f"C++ per-lane early exit ({full} thr)" in r.impl),
             ("Numba", lambda r: r.impl.startswith("numba")),
             ("PyTorch", lambda r: r.impl.startswith("PyTorch eager masked loop")),
             ("NumPy", lambda r: r.impl.startswith("numpy masked loop")))
    if rj and rj.t:
        parts = []
        for label, pred in peers:
            p = find(rows, "W5", pred)
            if p and p.t:
                verdict = "faster" if rj.t < p.t else "slower"
                parts.append(f"{label} {p.t * 1e3:.1f} ms (rune is {max(rj.t, p.t) / min(rj.t, p.t):.2f}x {verdict})")
        w(f"**rune compiled: {rj.t * 1e3:.1f} ms.** " + ("In this run: " + "; ".join(parts) + "." if parts else ""))
        floor = find(rows, "W5", peers[0][1])
        if floor and floor.t:
            q = rj.t / floor.t
            w("")
            w(f"**Target (issue 26: within 2x of the plain C++ per-lane early exit, {full} threads): {times(q)}, "
              f"{'MET' if q <= 2 else 'NOT MET'}.**")
    else:
        w("**rune: no W5 result (see the raw output below).**")
    w("")
    w("| implementation | median ms | ratio (time ÷ rune compiled's) | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|---|")
    table_rows(w, rows, "W5", rj,
               lambda r: f"{r.t * 1e3:.2f} | {ratio(r.t, rj.t if rj else None)} | {fmt_t(r.t)} ({r.spread()}) | "
                         f"{r.program} | {r.notes}")
    w("")


def peers_folder(checks):
    """The peers' folder the run used ("# peers: PATH"), relative to the repository."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for c in checks:
        m = re.match(r"# peers: (\S+)", c)
        if m:
            return os.path.relpath(m.group(1), root)
    return "bench/peers"


def thread_counts(full):
    """The thread counts the programs ran at: the machine's default concurrency, then 1."""
    return [full] + ([1] if full != 1 else [])


def default_threads(checks, rows):
    """oneTBB's default concurrency as rune's W1 program printed it, else the most threads a row used."""
    for c in checks:
        m = re.search(r"tbb default concurrency=(\d+)", c)
        if m:
            return int(m.group(1))
    return max([r.threads for r in rows if r.threads], default=1)


class Machine:
    """What this machine is, as the header of the results names it."""

    def __init__(self):
        self.model = sh("lscpu | grep -m1 'Model name'").split(":", 1)[-1].strip() or "unknown"
        self.l3 = sh("lscpu | grep -m1 'L3 cache'").split(":", 1)[-1].strip()
        self.nproc = sh("nproc")
        self.mem = sh("free -g | awk '/^Mem:/{print $2}'")
        self.cxx = sh("g++ --version | head -1")
        self.kernel = sh("uname -r")


def header_section(a, raw_rows, checks, machine, full, w):
    rounds = max([r.round for r in raw_rows], default=1)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for c in checks:
        m = re.search(r"started (\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? UTC)", c)
        if m:
            now = m.group(1)
            break

    w("# rune benchmarks: results")
    w("")
    w("Generated by `bench/run.sh` (do not edit by hand; rerun it). Each program reports the median of "
      "n >= 5 timed samples taken after untimed warm-up calls; rune's programs and the peers' "
      f"(`{peers_folder(checks)}`: libtorch C++, numpy, PyTorch Python, Numba, numexpr, plain C++ floors) ran one after "
      f"another in the same run, on the same machine, {rounds} time(s) (rounds). The tables give the "
      "median of the rounds' medians and, in the median column, the lowest and highest round median.")
    w("")
    w("**Reproduce:** `make bench` (which runs `bash bench/run.sh build`). "
      f"This file came from: `{a.invocation}`.")
    w("")
    # (the tree as run.sh found it when the programs ran, else as it is now)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = sh(f"git -C '{root}' rev-parse --short HEAD 2>/dev/null")
    dirty = sh(f"git -C '{root}' status --porcelain 2>/dev/null | wc -l")
    for c in checks:
        m = re.match(r"# tree: (\S+), (\d+) uncommitted", c)
        if m:
            head, dirty = m.group(1), m.group(2)
            break
    w(f"- Date: {now}")
    w(f"- Tree: {('commit ' + head) if head else 'no commit yet'}"
      f"{f', {dirty} uncommitted path(s)' if dirty not in ('', '0') else ''} (the library as built in `{a.build}`)")
    w(f"- Machine: `{machine.model}`, nproc = {machine.nproc}, {machine.mem} GiB RAM, L3 {machine.l3}; "
      f"kernel {machine.kernel}")
    w(f"- Compiler: {machine.cxx}; rune built by meson (buildtype release: -O3, `-ffp-contract=off`, "
      "no `-march=native`; the AVX2 kernels are picked at run time)")
    vers = [c for c in checks if "python=" in c]
    if vers:
        w(f"- Python peers: `{max(vers, key=len).split(': ', 1)[-1]}`")
    w("- Threads: rune runs large elementwise loops on oneTBB with its default concurrency "
      f"({full} here) unless a row says 1 thr; PyTorch rows say their thread count; numpy is single-threaded.")
    cpu, rnd = [], 1
    for c in checks:
        m = re.match(r"# ==== round (\d+)", c)
        if m:
            rnd = int(m.group(1))
        m = re.match(r"# cpu: (.*): wall ([\d.]+) s, program ([\d.]+) s, others ([\d.]+) s", c)
        if m:
            label = m.group(1) + (f", round {rnd}" if rounds > 1 else "")
            cpu.append((label, float(m.group(2)), float(m.group(3)), float(m.group(4))))
    discarded = sum(1 for c in checks if c.startswith("# discarded a disturbed run"))
    if cpu:
        wall = sum(x[1] for x in cpu)
        others = sum(x[3] for x in cpu)
        noisy = [f"{x[0]} ({x[3]:.1f} s of {x[1]:.1f} s)" for x in cpu if x[3] > 0.25 * x[1] and x[3] > 0.3]
        w(f"- Disturbance: while the benchmark programs ran ({wall:.0f} s), other processes used {others:.1f} s "
          f"of CPU on this {machine.nproc}-core machine" +
          (" (noisy: " + ", ".join(noisy) + ")" if noisy else " (quiet)") +
          ". Per-program figures are in Checks (`# cpu:` lines)" +
          (f"; {discarded} disturbed program run(s) were discarded and run again after the machine went idle."
           if discarded else "."))
    skips = [c for c in checks if c.startswith("# SKIP") or c.startswith("# FAILED")]
    if skips:
        w("- Skipped or failed:")
        for s in skips:
            w(f"  - {s[2:]}")
    w("")


def w1_section(rows, w):
    w("## W1: eager per-op overhead, 1000 sequential `x = x + 1.0` on a 4-element float64 tensor")
    w("")
    rune1 = find(rows, "W1", lambda r: r.impl.startswith("rune nx eager (x = x + 1.0)"))
    lt = find(rows, "W1", lambda r: r.impl.startswith("libtorch C++ eager (x = x + 1.0)"))
    npy = find(rows, "W1", lambda r: r.impl.startswith("numpy (x = x + 1.0)"))
    tpy = find(rows, "W1", lambda r: r.impl.startswith("PyTorch Python eager (x = x + 1.0)"))
    floor = find(rows, "W1", lambda r: "in place" in r.impl and r.impl.startswith("plain C++"))
    if rune1 and rune1.ns_op is not None:
        met = rune1.ns_op < W1_TARGET_NS
        per = [f"{r.ns_op:.0f}" for r in rune1.rs if r.ns_op is not None]
        w(f"**rune: {rune1.ns_op:.1f} ns/op; target < {W1_TARGET_NS:.0f} ns/op: "
          f"{'MET' if met else 'NOT MET'}.**" + (f" (per round: {', '.join(per)} ns/op)" if len(per) > 1 else ""))
        parts = []
        for label, r in (("libtorch C++ eager", lt), ("numpy", npy), ("PyTorch Python eager", tpy)):
            if r and r.ns_op:
                parts.append(f"{label} {r.ns_op:.0f} ns/op (rune is {r.ns_op / rune1.ns_op:.1f}x faster)")
        if floor and floor.ns_op:
            parts.append(f"plain C++ floor {floor.ns_op:.2f} ns/op (rune is {rune1.ns_op / floor.ns_op:.0f}x slower)")
        if parts:
            w("")
            w("Ratios in this run: " + "; ".join(parts) + ".")
    else:
        w("**rune: no W1 result (see the raw output below).**")
    w("")
    w("| implementation | ns/op | ratio to rune (ns/op ÷ rune's) | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|---|")
    for r in rows:
        if r.workload != "W1":
            continue
        name = f"**{r.impl}**" if r is rune1 else r.impl
        ns = f"{r.ns_op:.2f}" if r.ns_op is not None and r.ns_op < 10 else (
            f"{r.ns_op:.1f}" if r.ns_op is not None else r.derived)
        rr = ratio(r.ns_op, rune1.ns_op if rune1 else None)
        w(f"| {name} | {ns} | {rr} | {fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    w("")


def w3a_section(rows, machine, full, w):
    """W3 (a); gives the copy loops' rows by thread count, the baselines of W3 (b) and (c)."""
    w("## W3 (a): the single add `a + b`, 10,000,000 float32, against a copy loop of the same size")
    w("")
    w("GB/s counts 12 B/element for an add (2 reads + 1 write) and 8 B/element for a copy "
      "(STREAM convention: write-allocate traffic not counted). The target compares rune's add "
      "GB/s with the copy loop's GB/s at the same thread count; the headline copy is our own "
      "`C++ STREAM copy b = a` in `bench_w3` (the same loop as the peers' `w3_floor`, which GCC "
      "turns into a `memcpy` call).")
    w("")
    w(f"Cache note: this VM reports an L3 of {machine.l3 or 'unknown size'}; 40 MB operands are then partly "
      "cache-resident, so these GB/s (all rows alike) sit above what streaming from DRAM gives. The peers' "
      "own `../shared/peers/RESULTS.md` was measured on another machine (AMD EPYC, 32 MiB L3): compare "
      "only rows of this run.")
    w("")
    add_rows = [r for r in rows if r.workload == "W3add" or (r.workload == "W3" and "STREAM" in r.impl)]
    verdicts = []
    for th in thread_counts(full):
        radd = find(rows, "W3add", lambda r, th=th: r.impl.startswith("rune nx a + b") and r.threads == th)
        copy = find(rows, "W3add", lambda r, th=th: r.impl.startswith("C++ STREAM copy") and r.threads == th)
        if radd and copy and radd.gbs and copy.gbs:
            frac = radd.gbs / copy.gbs
            verdicts.append((th, radd, copy, frac))
    for th, radd, copy, frac in verdicts:
        plain = find(rows, "W3add", lambda r, th=th: r.impl.startswith("C++ copy loop") and r.threads == th)
        cadd = find(rows, "W3add", lambda r, th=th: r.impl.startswith("C++ STREAM add") and r.threads == th)
        extra = []
        if plain and plain.gbs:
            extra.append(f"{radd.gbs / plain.gbs * 100:.0f}% of the plain-store copy loop ({plain.gbs:.2f} GB/s)")
        if cadd and cadd.gbs:
            extra.append(f"{radd.gbs / cadd.gbs * 100:.0f}% of the plain C++ add loop ({cadd.gbs:.2f} GB/s, itself "
                         f"{cadd.gbs / copy.gbs * 100:.0f}% of the copy)")
        rr, cr = radd.by_round(), copy.by_round()
        per = [f"{rr[k].gbs / cr[k].gbs * 100:.0f}%" for k in sorted(rr) if k in cr and rr[k].gbs and cr[k].gbs]
        if len(per) > 1:
            extra.insert(0, "per round: " + ", ".join(per))
        more = f" (and {'; '.join(extra)})" if extra else ""
        if th == full:
            w(f"- **{th} thr: rune a + b {radd.gbs:.2f} GB/s ({radd.t * 1e3:.2f} ms/call) vs copy "
              f"{copy.gbs:.2f} GB/s ({copy.t * 1e3:.2f} ms/call) = {frac * 100:.0f}% of the copy loop's bandwidth; "
              f"target (>= 80%): {'MET' if frac >= W3_ADD_TARGET else 'NOT MET'}**{more}.")
        else:
            w(f"- {th} thr (informative): rune a + b {radd.gbs:.2f} GB/s ({radd.t * 1e3:.2f} ms/call) vs copy "
              f"{copy.gbs:.2f} GB/s ({copy.t * 1e3:.2f} ms/call) = {frac * 100:.0f}% of the copy loop's bandwidth, "
              f"{'at or above' if frac >= W3_ADD_TARGET else 'below'} 80%{more}.")
    if not verdicts:
        w("- **rune: no W3 add result (see the raw output below).**")
    radd_full = verdicts[0][1] if verdicts and verdicts[0][0] == full else None
    if radd_full:
        npa = find(rows, "W3add", lambda r: r.impl.startswith("numpy a + b"))
        tpa = find(rows, "W3add", lambda r: r.impl.startswith("PyTorch eager a + b") and r.threads == full)
        sadd = find(rows, "W3add", lambda r: r.impl.startswith("C++ STREAM add") and r.threads == full)
        parts = []
        if npa:
            parts.append(f"numpy {npa.t * 1e3:.2f} ms (rune is {npa.t / radd_full.t:.1f}x faster)")
        if tpa:
            parts.append(f"PyTorch eager ({full} threads) {tpa.t * 1e3:.2f} ms "
                         f"(rune is {tpa.t / radd_full.t:.1f}x faster)")
        if sadd:
            parts.append(f"plain C++ add loop c = a + b ({full} thr, preallocated output) {sadd.gbs:.2f} GB/s "
                         f"(rune reaches {radd_full.gbs / sadd.gbs * 100:.0f}% of it)")
        if parts:
            w(f"- rune a + b ({full} thr) {radd_full.t * 1e3:.2f} ms/call against: " + "; ".join(parts) + ".")
    w("")
    w("| implementation | ms/call | GB/s | B/elem counted | % of the copy loop's GB/s (same threads) | median (range) | program | notes |")
    w("|---|---|---|---|---|---|---|---|")
    copies = {th: c for th, _, c, _ in verdicts}
    for r in add_rows:
        c = copies.get(r.threads)
        pct = f"{r.gbs / c.gbs * 100:.0f}%" if c and r.gbs else "–"
        name = r.impl + (f" [{r.build}]" if r.program.startswith("w3_floor") and r.build else "")
        if r.impl.startswith("rune"):
            name = f"**{name}**"
        gb = f"{r.gbs:.2f}" if r.gbs is not None else "–"
        bpe = f"{r.bytes_per_elem:.0f}" if r.bytes_per_elem else "–"
        w(f"| {name} | {r.t * 1e3:.2f} | {gb} | {bpe} | {pct} | {fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    w("")
    return copies


def w3b_section(rows, copies, full, w):
    w("## W3 (b): the unfused eager expression `tanh(x * 2 + 1) * x - exp(-x * x)`, 10,000,000 float32, "
      "x = linspace(-3, 3)")
    w("")
    w("\"Effective GB/s\" counts 8 B/element (read x, write y), as the peers' `w3_floor.cpp` and "
      "`w3_elementwise.py` do; ns/elem and the ratios are the useful figures for an unfused chain of 8 ops.")
    w("")
    ex_rows = [r for r in rows if r.workload == "W3" and "STREAM" not in r.impl and not is_w3_compiled(r)]
    rf = find(rows, "W3", lambda r: r.impl.startswith("rune nx eager expression") and r.threads == full)
    if rf:
        parts = []
        npe = find(rows, "W3", lambda r: r.impl.startswith("numpy expression"))
        tpe = find(rows, "W3", lambda r: r.impl.startswith("PyTorch eager expression") and r.threads == full)
        flf = find(rows, "W3", lambda r: r.impl.startswith(f"plain C++ loop ({full} thr)"))
        fl1 = find(rows, "W3", lambda r: r.impl.startswith("plain C++ loop (1 thr)") and "-fopenmp" not in r.notes)
        if npe:
            parts.append(f"numpy {npe.t * 1e3:.1f} ms (rune is {npe.t / rf.t:.1f}x faster)")
        if tpe:
            parts.append(f"PyTorch eager ({full} threads) {tpe.t * 1e3:.1f} ms (rune is {tpe.t / rf.t:.1f}x faster)")
        if flf and full != 1:
            parts.append(f"plain C++ fused loop, glibc tanhf/expf, OpenMP {full} thr {flf.t * 1e3:.1f} ms "
                         f"(rune is {flf.t / rf.t:.1f}x faster)")
        if fl1:
            parts.append(f"plain C++ fused loop, 1 thr {fl1.t * 1e3:.1f} ms")
        if full in copies:
            c = copies[full]
            parts.append(f"copy loop ({full} thr) {c.t * 1e3:.2f} ms: the expression costs {rf.t / c.t:.1f} copies; "
                         f"its effective {rf.gbs:.2f} GB/s is {rf.gbs / c.gbs * 100:.0f}% of the copy's GB/s")
        w(f"**rune ({full} thr): {rf.t * 1e3:.2f} ms/call, {rf.t / N * 1e9:.2f} ns/elem, {rf.gbs:.2f} GB/s "
          "effective.** No target was set for this row.")
        if parts:
            w("")
            w("Against, in this run: " + "; ".join(parts) + ".")
    else:
        w("**rune: no W3 expression result (see the raw output below).**")
    w("")
    w(f"| implementation | ms/call | ns/elem | effective GB/s | ratio to rune {full} thr (time ÷ rune's) | median (range) | program | notes |")
    w("|---|---|---|---|---|---|---|---|")
    for r in ex_rows:
        name = r.impl + (f" [{r.build}]" if r.program.startswith("w3_floor") and r.build else "")
        if r.impl.startswith("rune"):
            name = f"**{name}**"
        gb = f"{r.gbs:.3g}" if r.gbs is not None else "–"
        w(f"| {name} | {r.t * 1e3:.2f} | {r.t / N * 1e9:.2f} | {gb} | {ratio(r.t, rf.t if rf else None)} | "
          f"{fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    w("")


def checks_section(checks, raw, w):
    w("## Checks")
    w("")
    w("Correctness and environment lines printed by the programs (`#` lines): rune's W1 result must be "
      "1001 in every element; rune's a + b must equal the float sum bit for bit; rune's expression is "
      "compared with the plain C++ `tanhf`/`expf` loop on the same inputs (max abs difference <= 1e-5) "
      "and its float64 checksum sits beside the peers'. rune's W4 gradient is compared with the backward "
      "pass written by hand in plain nx ops, in float32 and in float64 (largest difference over max|g| "
      "<= 1e-4), 20 SGD steps with either gradient must end at the same parameters, and the loss must "
      "fall below half over the timed training steps; the PyTorch and libtorch gradient peers check "
      "their autograd against a hand-written backward pass too. rune's W2 final states (both carries) must "
      "equal the plain C++ loop's bit for bit and its W2 gradient must agree with the hand-written reverse "
      "loop to 1e-9 relative; rune's compiled W3 chain is checked like the eager one; rune's W6 call must "
      "give 3 in every element after one trace; rune's W7 loaded step must give the plain C++ step's bits after 100 frames; rune's W8 flight, frames and "
      "maps must stay finite and within 1e-9 of the plain C++ loop's (its per-primitive calls within 1e-12), "
      "and its allocation counter must count a deliberate malloc, a strdup and an operator new once each. A failed check makes the program exit "
      "non-zero (reported above as FAILED).")
    w("")
    w("```")
    for c in checks:
        if not c.startswith("# ===="):
            w(c)
    w("```")
    w("")
    w("## Raw output")
    w("")
    w("```")
    with open(raw, encoding="utf-8", errors="replace") as f:
        w(f.read().rstrip("\n"))
    w("```")


# ---------------- W9
W9_SIZES = ("8 B", "64 B", "512 B", "4 KiB", "8 KiB", "32 KiB", "128 KiB", "512 KiB", "2 MiB", "8 MiB", "64 MiB")
W9_SMALL = ("8 B", "64 B", "512 B", "4 KiB", "8 KiB")  # the 1 us target
W9_LARGE = ("128 KiB", "512 KiB", "2 MiB", "8 MiB", "64 MiB")  # the 1.1x target
W9_MODES = (("fixed order", "fixed order (rune's default: the bits of a map's psum)"),
            ("RUNE_RANKS_SUM=fast: MPI's order", "RUNE_RANKS_SUM=fast (MPI_Allreduce's own order)"))


def w9_us(r):
    """us per call, the median over the rounds."""
    return median([x.num(r"([\d.]+) us/call") for x in r.rs]) if r else None


def w9_ms(r):
    """ms per call, the median over the rounds."""
    return median([x.num(r"([\d.]+) ms/call") for x in r.rs]) if r else None


def w9_psum_section(rows, w):
    w("## W9 (a): psum across the ranks of an MPI job")
    w("")
    w("`rune::jit` of `rune::psum(rune::ranks(), x)` on a float64 vector, called on both ranks of a job of two "
      "(`mpiexec -n 2`, one rank per core, over shared memory), against a raw `MPI_Allreduce(MPI_SUM)` on "
      "the same sizes in the same program (`bench/w9_ranks.cpp`). rune's default sum has a fixed order (the "
      "bits of a map's psum over as many lanes: up to 64 KiB of rows every rank gathers every operand and "
      "sums; above, each sums a part and the parts are gathered); `RUNE_RANKS_SUM=fast` calls "
      "`MPI_Allreduce` on the planned buffers instead. On two ranks the fixed order is `MPI_Allreduce`'s "
      "too, with an operation of rune's adding `(0 + a) + (0 + b)` (two terms commute; docs/scale-out.md), so "
      "these rows measure that path; the gathering and by-parts paths run from three ranks, which this "
      "two-core machine cannot time. `rune into` rows run the program into the caller's buffer "
      "(`rune::Loaded::into`), as `MPI_Allreduce` writes into its caller's, and are held against "
      "`MPI_Allreduce` into one buffer; `rune jit` rows return a new tensor per call (`y = psum(x)`: the last "
      "result lives while the next is written, two buffers in turn), and are held against `MPI_Allreduce` "
      "into two buffers in turn. Every buffer is 64-byte aligned, as rune's: MPI's copies run at different "
      "speeds by alignment and by how many buffers a loop writes (20% at 512 KiB here). The four run in "
      "rounds, alternating. Issue 30's "
      f"targets: within {W9_SMALL_US:.0f} us of `MPI_Allreduce` up to 8 KiB, within {W9_LARGE_RATIO:.1f}x "
      "of it from 128 KiB.")
    w("")
    one = {s: find(rows, "W9", lambda r, s=s: r.impl == "MPI_Allreduce float64 sum (reference), " + s) for s in W9_SIZES}
    two = {s: find(rows, "W9", lambda r, s=s: r.impl == "MPI_Allreduce float64 sum into two buffers in turn "
                   "(reference), " + s) for s in W9_SIZES}
    reference = {"rune jit psum": two, "rune Loaded::into psum": one}
    if not any(one.values()):
        w("**No W9 result: the build has no MPI, or the run failed (see the raw output below).**")
        w("")
        return
    for mode, words in W9_MODES:
        for how, buffers in (("rune jit psum", "a new result per call, against MPI into two buffers in turn"),
                             ("rune Loaded::into psum", "into the caller's buffer, against MPI into one")):
            ours = {s: find(rows, "W9", lambda r, s=s: r.impl == f"{how} ({mode}), {s}") for s in W9_SIZES}
            mpi = reference[how]
            small = [(s, w9_us(ours[s]) - w9_us(mpi[s])) for s in W9_SMALL if ours[s] and mpi[s]]
            large = [(s, w9_us(ours[s]) / w9_us(mpi[s])) for s in W9_LARGE if ours[s] and mpi[s]]
            if not small or not large:
                w(f"- **{words}, {buffers}: no result (see the raw output below).**")
                continue
            worst_small, worst_large = max(small, key=lambda p: p[1]), max(large, key=lambda p: p[1])
            w(f"- **{words}, {buffers}: up to 8 KiB at most {worst_small[1]:+.2f} us from MPI_Allreduce (at "
              f"{worst_small[0]}): {'MET' if worst_small[1] <= W9_SMALL_US else 'NOT MET'}; from 128 KiB at most "
              f"{worst_large[1]:.2f}x its time (at {worst_large[0]}): "
              f"{'MET' if worst_large[1] <= W9_LARGE_RATIO else 'NOT MET'}.**")
    w("")
    w("Each rune cell: us/call (its time over its reference's, and the difference).")
    w("")
    w("| size | MPI_Allreduce, one buffer, us/call | MPI_Allreduce, two buffers in turn | rune jit, fixed order | "
      "rune into, fixed order | rune jit, fast | rune into, fast |")
    w("|---|---|---|---|---|---|---|")
    for s in W9_SIZES:
        cells = []
        for mode, _ in W9_MODES:
            for how in ("rune jit psum", "rune Loaded::into psum"):
                r = w9_us(find(rows, "W9", lambda x, s=s, mode=mode, how=how: x.impl == f"{how} ({mode}), {s}"))
                m = w9_us(reference[how][s])
                cells.append(f"{r:.2f} ({r / m:.2f}x, {r - m:+.2f} us)" if r is not None and m else "-")
        m1, m2 = w9_us(one[s]), w9_us(two[s])
        w(f"| {s} | {f'{m1:.2f}' if m1 is not None else '-'} | {f'{m2:.2f}' if m2 is not None else '-'} | "
          + " | ".join(cells) + " |")
    w("")


def w9_train_section(rows, w):
    w("## W9 (b): data-parallel training, two ranks")
    w("")
    w("W4's MLP (`bench/mlp.hpp`, batch 128 per rank, float32), each rank's own batch, the gradient averaged "
      "over the ranks by `rune::pmean(rune::ranks(), gradient)` inside the `rune::jit`ed step, then SGD, on "
      "two ranks (`mpiexec -n 2 --bind-to core`: one core each), against PyTorch's DistributedDataParallel over "
      "gloo with the same model, two processes of one thread each (`bench/peer_w9_ddp.py`). Beside each, the "
      "same step with no exchange (both ranks computing at once), the exchange alone (the gradient's "
      "203,530 floats) and the step alone followed by a raw `MPI_Allreduce` of as many floats (an exchange "
      "written by hand: the ranks wait for each other every step, as in any data-parallel step without "
      "overlap); rune's four rows run in rounds, alternating. Issue 30's targets: faster than DDP; within the step alone plus "
      f"{W9_DDP_EXCHANGE:.1f}x the exchange.")
    w("")
    ours = w9_ms(find(rows, "W9", lambda r: r.impl == "rune data-parallel MLP step (pmean of the gradient)"))
    alone = w9_ms(find(rows, "W9", lambda r: r.impl == "rune MLP step alone (no exchange; every rank at once)"))
    exchange = w9_ms(find(rows, "W9", lambda r: r.impl == "MPI_Allreduce of the gradient (reference)"))
    ddp = w9_ms(find(rows, "W9", lambda r: r.impl == "PyTorch DDP (gloo) MLP step"))
    if ours is None or alone is None or exchange is None:
        w("**No W9 (b) result (see the raw output below).**")
    else:
        bound = alone + W9_DDP_EXCHANGE * exchange
        w(f"- **rune {ours:.2f} ms/step; alone {alone:.2f} ms + {W9_DDP_EXCHANGE:.1f} x {exchange:.2f} ms "
          f"(MPI_Allreduce) = {bound:.2f} ms: {'MET' if ours <= bound else 'NOT MET'}.**")
        by_hand = w9_ms(find(rows, "W9", lambda r: r.impl.startswith("rune MLP step alone, then MPI_Allreduce")))
        if by_hand is not None:
            w(f"- the step alone, then a raw MPI_Allreduce (written by hand): {by_hand:.2f} ms/step; rune's step "
              f"{ours / by_hand:.2f}x its time.")
        if ddp is not None:
            w(f"- **PyTorch DDP (gloo) {ddp:.2f} ms/step: rune {'faster' if ours < ddp else 'slower'}, "
              f"{times(ddp / ours)} its speed: {'MET' if ours < ddp else 'NOT MET'}.**")
        else:
            w("- **PyTorch DDP: no result (torch not installed: `make bench` installs it).**")
    w("")
    w("| implementation | ms/step (or /call) | median per sample (range) | program | notes |")
    w("|---|---|---|---|---|")
    for r in rows:  # (the rows in ms: this part's)
        if r.workload == "W9" and r.t is not None and w9_ms(r) is not None and "ensemble" not in r.impl:
            w(f"| {r.impl} | {w9_ms(r):.2f} | {fmt_t(r.t)} ({r.spread()}) | {r.program} | {r.notes} |")
    w("")


def w9_ensemble_section(rows, w):
    w("## W9 (c): an ensemble split over ranks")
    w("")
    w("1,024 Lorenz-63 rollouts of 1,000 steps (W2's step, float64), each rank's share under `rune::vmap` of a "
      "`rune::scan` in one `rune::jit`, the mean final x reduced over the ranks by `rune::pmean`: on one rank "
      "and on two (one core each). The statistic is the same bits on both (the check lines below).")
    w("")
    one = w9_ms(find(rows, "W9", lambda r: r.impl.startswith("rune ensemble") and r.impl.endswith(", 1 rank")))
    two = w9_ms(find(rows, "W9", lambda r: r.impl.startswith("rune ensemble") and r.impl.endswith(", 2 ranks")))
    if one is None or two is None:
        w("**No W9 (c) result (see the raw output below).**")
    else:
        w(f"- **1 rank {one:.2f} ms, 2 ranks {two:.2f} ms: {one / two:.2f}x from 1 to 2 ranks.**")
    w("")


def history_section(w):
    """bench/HISTORY.md, hand-written: earlier measurements that design choices rest on."""
    history = os.path.join(os.path.dirname(os.path.abspath(__file__)), "HISTORY.md")
    if os.path.exists(history):
        with open(history, encoding="utf-8") as f:
            w(f.read().rstrip("\n").replace("# Earlier measurements", "## Earlier measurements", 1))
        w("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--invocation", default="bash bench/run.sh build")
    ap.add_argument("--build", default="")
    a = ap.parse_args()
    raw_rows, checks = parse(a.raw)
    rows = aggregate(raw_rows)
    machine = Machine()
    full = default_threads(checks, rows)
    out = []
    w = out.append
    header_section(a, raw_rows, checks, machine, full, w)
    w1_section(rows, w)
    w2_section(rows, checks, w)
    copies = w3a_section(rows, machine, full, w)
    w3b_section(rows, copies, full, w)
    w3c_section(rows, copies, full, w)
    w4_section(rows, checks, machine, full, w)
    w5_section(rows, peers_folder(checks), full, w)
    w6_section(rows, w)
    w7_section(rows, w)
    w8_section(rows, w)
    w9_psum_section(rows, w)
    w9_train_section(rows, w)
    w9_ensemble_section(rows, w)
    history_section(w)
    checks_section(checks, a.raw, w)
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    shutil.move(tmp, a.out)


if __name__ == "__main__":
    main()
