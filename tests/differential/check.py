"""The differential suite's comparisons (compare.py runs them): every case of
differential_cases against reference.py (NumPy) and gradients.py (PyTorch),
mismatches tallied by primitive, operand dtypes and kind, known ones
(known.txt) told apart from new ones."""
import collections
import fnmatch
import json

import numpy as np

import gradients
from reference import COMPOSITES, REFERENCES, refuses
from values import COMPLEX, FLOATS, REAL_OF, ROUNDOFF, Value, decode, narrow, ulp_distance

KINDS = ('nan', 'inf', 'zero_sign', 'value', 'shape', 'dtype', 'error', 'jit')


def float_mismatches(got, want, dtype, tolerance):
    """The kind of mismatch of each element of float arrays (None: none)."""
    g = Value(dtype, got).wide()
    w = Value(dtype, want).wide()
    kind = np.full(g.shape, None, dtype=object)
    gn, wn = np.isnan(g), np.isnan(w)
    checked = np.ones(g.shape, bool)
    if tolerance.kind == 'bound':
        checked = ~np.broadcast_to(tolerance.unchecked, g.shape)
        kind[~checked & np.broadcast_to(tolerance.nan_in, g.shape) & ~gn] = 'nan'
    kind[checked & (gn != wn)] = 'nan'
    both = checked & ~gn & ~wn
    kind[both & (np.isinf(g) | np.isinf(w)) & (g != w)] = 'inf'
    finite = both & np.isfinite(g) & np.isfinite(w)
    if tolerance.kind == 'bound':
        off = np.abs(g.astype(np.longdouble) - w.astype(np.longdouble)) > tolerance.bound
        kind[finite & off] = 'value'
        return kind
    zeros = (g == 0) & (w == 0)
    kind[finite & zeros & (np.signbit(g) != np.signbit(w))] = 'zero_sign'
    kind[finite & ~zeros & (ulp_distance(got, want, dtype) > tolerance.ulps)] = 'value'
    return kind


def complex_mismatches(got, want, dtype, tolerance):
    """Each part as a float (exact, bound); or, for `relative`, NaN-ness and
    infinities per part and the distance relative to the expected magnitude."""
    real = REAL_OF[dtype]
    if tolerance.kind != 'relative':
        parts = [float_mismatches(np.array(p(got), order='C'), np.array(p(want), order='C'), real, tolerance)
                 for p in (np.real, np.imag)]
        return np.where(parts[0] != None, parts[0], parts[1])  # noqa: E711
    g, w = got.astype(np.complex128), want.astype(np.complex128)
    kind = np.full(g.shape, None, dtype=object)
    for p in (np.real, np.imag):
        gp, wp = p(g), p(w)
        kind[(np.isnan(gp) != np.isnan(wp)) & (kind == None)] = 'nan'  # noqa: E711
        both = ~np.isnan(gp) & ~np.isnan(wp)
        kind[both & (np.isinf(gp) | np.isinf(wp)) & (gp != wp) & (kind == None)] = 'inf'  # noqa: E711
    finite = np.isfinite(g) & np.isfinite(w)
    off = np.abs(g - w) > tolerance.k * ROUNDOFF[dtype] * np.abs(w)
    kind[finite & off & (kind == None)] = 'value'  # noqa: E711
    return kind


def mismatches(got, want, tolerance):
    """Kinds of mismatch of each element of got (a Value) against want."""
    if tolerance.kind == 'nan':
        return np.full(got.array.shape, None if np.isnan(got.wide()).any() else 'nan', dtype=object)
    if want.shape != got.array.shape:
        return np.array(['shape'], dtype=object)
    want = np.array(want, order='C')
    got_array = np.array(got.array, order='C')
    if got.dtype in FLOATS:
        return float_mismatches(got_array, want, got.dtype, tolerance)
    if got.dtype in COMPLEX:
        return complex_mismatches(got_array, want.astype(got_array.dtype), got.dtype, tolerance)
    kind = np.full(got_array.shape, None, dtype=object)
    kind[got_array != want.astype(got_array.dtype)] = 'value'
    return kind


class Tally:
    """Mismatches by (primitive, operand dtypes, kind), with a first example."""

    def __init__(self):
        self.count = collections.Counter()
        self.example = {}
        self.cases = 0

    def add(self, prim, key, kind, count, example):
        self.count[(prim, key, kind)] += count
        self.example.setdefault((prim, key, kind), example)


def dtype_key(record):
    operands = [o['dtype'] for o in record['operands']]
    if record['prim'] == 'convert':
        return operands[0] + '->' + record['params']['dtype']
    return ','.join(operands)


def describe(operands, got, want, kind, limit=3):
    """A few mismatching elements, with the operands' elements at them where
    the operation is elementwise."""
    flat = np.flatnonzero(kind.ravel() != None)[:limit]  # noqa: E711
    lines = []
    for i in flat:
        at = np.unravel_index(i, kind.shape) if kind.shape else ()
        text = 'at %s: rune %r, reference %r' % (list(map(int, at)), element(got, at), element(want, at))
        lines.append(text)
    return '; '.join(lines) + ' | operands: ' + ', '.join(
        '%s %s' % (o.dtype, list(o.array.shape)) for o in operands)


def element(v, at):
    try:
        if isinstance(v, Value):
            return (v.wide() if v.dtype == 'bfloat16' else v.array)[at].item()
        return np.asarray(v)[at].item()
    except (IndexError, ValueError):
        return '?'


def check_call(record, tally):
    prim = record['prim']
    operands = [decode(o) for o in record['operands']]
    params = record['params']
    key = dtype_key(record)
    if 'jit' in record or 'jit_error' in record:
        tally.add(prim, key, 'jit', 1, 'compiled differs from eager: %s' % record.get('jit_error', 'bits'))
    if 'error' in record:
        if not refuses(prim, operands, params):
            tally.add(prim, key, 'error', 1, 'rune: ' + record['error'])
        return
    if refuses(prim, operands, params):
        tally.add(prim, key, 'error', 1, 'rune computes what NumPy refuses')
        return
    got = decode(record['result'])
    table = COMPOSITES if record['kind'] == 'composite' else REFERENCES
    want, tolerance = table[prim](operands, params, got.dtype)
    if want is not None and not isinstance(want, np.ndarray):
        want = np.asarray(want)
    if record['kind'] == 'composite' and want is not None and want.dtype != got.array.dtype:
        tally.add(prim, key, 'dtype', 1, 'rune %s, NumPy %s' % (got.dtype, want.dtype))
        return
    if want is not None and got.dtype == 'bfloat16' and want.dtype != np.uint16:
        want = narrow(want, 'bfloat16')
    kind = mismatches(got, want if want is not None else got.array, tolerance)
    for k in KINDS:
        n = int(np.count_nonzero(kind == k))
        if n:
            only = np.where(kind == k, kind, None)
            tally.add(prim, key, k, n, describe(operands, got, want, only))


class Known:
    """known.txt: `primitive dtypes kind [simd=LEVEL,...]  # issue 25 item N:
    why`, the first three shell patterns (grad:name for a derivative); a
    line with simd= holds at those instruction sets only (the kernels'
    names: generic, sse2, avx2, avx512)."""

    def __init__(self, path, simd, derivatives):
        self.entries = []
        with open(path) as f:
            for line in f:
                text = line.split('#', 1)[0].split()
                if not text:
                    continue
                levels = None
                if len(text) == 4 and text[3].startswith('simd='):
                    levels = text.pop()[len('simd='):].split(',')
                if len(text) != 3:
                    raise SystemExit('differential: a known.txt line needs 3 fields and simd=: ' + line.strip())
                applies = (levels is None or simd in levels) and (derivatives or not text[0].startswith('grad:'))
                if applies:
                    self.entries.append((tuple(text), line.strip()))
        self.used = set()

    def match(self, prim, key, kind):
        for i, (pattern, _) in enumerate(self.entries):
            if all(fnmatch.fnmatchcase(v, p) for v, p in zip((prim, key, kind), pattern)):
                self.used.add(i)
                return True
        return False


def check_file(cases_path, known_path, verbose):
    tally = Tally()
    table = []
    simd = None
    grads = []
    composites = 0
    with open(cases_path) as f:
        for line in f:
            record = json.loads(line)
            if record['kind'] == 'table':
                table, simd = record['prims'], record['simd']
            elif record['kind'] == 'grad':
                grads.append(record)
            elif record['kind'] == 'composite':
                composites += 1
                check_call(record, tally)
            else:
                tally.cases += 1
                check_call(record, tally)
    failed = False
    missing_cases = [p for p in table if p not in covered(cases_path)]
    missing_reference = [p for p in table if p not in REFERENCES]
    if missing_cases or missing_reference:
        print('differential: primitives without cases: %s; without a NumPy reference in reference.py: %s'
              % (missing_cases, missing_reference))
        failed = True
    print('differential: %d cases of %d primitives and %d of composite functions against NumPy %s (kernels: %s)'
          % (tally.cases, len(table), composites, np.__version__, simd))
    derivatives, note = gradients.check(grads, tally)
    print(note)
    known = Known(known_path, simd, derivatives)
    new = 0
    for (prim, key, kind), n in sorted(tally.count.items()):
        is_known = known.match(prim, key, kind)
        if not is_known:
            new += 1
        if verbose or not is_known:
            print('%s %s %s %s: %d elements; %s' % ('known' if is_known else 'MISMATCH', prim, key, kind, n,
                                                    tally.example[(prim, key, kind)]))
    known_count = sum(1 for k in tally.count if known.match(*k))
    print('differential: %d kinds of mismatch listed in known.txt' % known_count)
    for i, (_, line) in enumerate(known.entries):
        if i not in known.used:
            print('differential: no longer seen (prune it from known.txt): ' + line)
    if new:
        print('differential: %d kinds of mismatch not in known.txt' % new)
        failed = True
    return 1 if failed else 0


def covered(cases_path):
    prims = set()
    with open(cases_path) as f:
        for line in f:
            r = json.loads(line)
            if r['kind'] == 'call':
                prims.add(r['prim'])
    return prims
