"""NumPy's answer for each primitive of rune's table, with how closely
rune's must match it (docs/reliability.md). Each entry takes the case's
operands (values.Value), its parameters and the result's dtype, and gives
(the expected storage array, a Tolerance); a primitive of the table without
an entry here fails the suite."""
import math

import numpy as np

from values import COMPLEX, FLOATS, LARGEST, REAL_OF, ROUNDOFF, SMALLEST_NORMAL, SMALLEST_SUBNORMAL, STORAGE, Value, double, narrow


class Tolerance:
    """exact: the same bits (NaN: any NaN). ulps: within `ulps` units in
    the last place, NaN-ness, infinities and signs of zeros exact. bound:
    within `bound` (an array) of the expected value, NaN-ness and infinities
    exact, the sign of a zero free; but where `unchecked` holds (partial
    results may overflow or underflow, depending on the order of the
    operations) only a NaN that flows in (`nan_in`) is required. relative:
    complex results within k roundoffs of the expected magnitude, per part
    NaN-ness and infinities exact. nan: NumPy refuses (a singular matrix):
    rune's result must hold a NaN."""

    def __init__(self, kind, ulps=0, bound=None, unchecked=False, nan_in=False, k=0):
        self.kind, self.ulps, self.bound, self.k = kind, ulps, bound, k
        self.unchecked, self.nan_in = unchecked, nan_in


EXACT = Tolerance('exact')

# docs/accuracy.md's bounds in ulps (float64, float32); float16 and
# bfloat16 compute in float32 and round once: one ulp of theirs.
ULPS = {
    'log': (1, 1), 'sqrt': (0, 0), 'exp': (1, 2), 'sin': (1, 1), 'cos': (1, 1), 'tanh': (1, 4), 'exp2': (4, 4),
    'expm1': (4, 4), 'log2': (4, 4), 'log1p': (4, 4), 'tan': (1, 1), 'sinh': (4, 4), 'cosh': (4, 4),
    'asin': (4, 4), 'acos': (4, 4), 'atan': (4, 4), 'erf': (4, 4),
    # not in the table: rsqrt is a division by sqrt; pow and atan2 call the
    # C library per element (within an ulp).
    'rsqrt': (2, 2), 'pow': (1, 1), 'atan2': (1, 1),
}


def ulps_for(prim, dtype):
    f64, f32 = ULPS[prim]
    if dtype == 'float64':
        return Tolerance('ulps', ulps=f64)
    if dtype == 'float32':
        return Tolerance('ulps', ulps=f32)
    return Tolerance('ulps', ulps=0 if f64 == 0 else 1)


def precise(x, dtype, prim):
    """Operands for a reference: long double for float64's inexact
    functions (more precise than the result), float64 otherwise (rounding a
    long double result to float64 would round twice; float64 results
    rounded to the narrower floats round once in effect)."""
    return x.astype(np.longdouble) if dtype == 'float64' and ULPS[prim][0] > 0 else x


def nonzero(v):
    return v.wide() != 0


# ---- elementwise

def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))


REAL_UNARY = {
    'exp': np.exp, 'exp2': np.exp2, 'log': np.log, 'log2': np.log2, 'log1p': np.log1p, 'expm1': np.expm1,
    'sqrt': np.sqrt, 'rsqrt': lambda x: 1 / np.sqrt(x), 'sin': np.sin, 'cos': np.cos, 'tan': np.tan,
    'tanh': np.tanh, 'sinh': np.sinh, 'cosh': np.cosh, 'asin': np.arcsin, 'acos': np.arccos,
    'atan': np.arctan, 'erf': erf,
}
COMPLEX_UNARY = {'exp': np.exp, 'log': np.log, 'sqrt': np.sqrt, 'sin': np.sin, 'cos': np.cos, 'tan': np.tan,
                 'tanh': np.tanh, 'sinh': np.sinh, 'cosh': np.cosh}


def transcendental(prim, x, result):
    if result in COMPLEX:
        want = COMPLEX_UNARY[prim](x.wide())
        return narrow(want, result), Tolerance('relative', k=8)
    want = REAL_UNARY[prim](precise(x.wide(), result, prim))
    return narrow(want, result), ulps_for(prim, result)


def sign(x, result):
    w = x.wide()
    if result in COMPLEX:  # z / |z| (NumPy 2, PyTorch, C++'s polar convention); 0 stays 0
        want = np.where(w == 0, w, w / np.abs(w))
        return narrow(want, result), Tolerance('relative', k=4)
    if result in FLOATS:  # keeps the sign of a zero (docs/nx.md)
        return narrow(np.where(w == 0, w, np.sign(w)), result), EXACT
    return np.sign(w).astype(STORAGE[result]), EXACT


def neg(x, result):
    if x.dtype == 'bfloat16':
        return x.array ^ np.uint16(0x8000), EXACT
    return np.negative(x.array), EXACT


def absolute(x, result):
    if x.dtype == 'bfloat16':
        return x.array & np.uint16(0x7FFF), EXACT
    if x.dtype in COMPLEX:
        return narrow(np.abs(x.wide()), result), Tolerance('ulps', ulps=1)
    return np.abs(x.array), EXACT


def rounding(f):
    return lambda x, result: (narrow(f(x.wide()), result), EXACT)


def classify(f):
    def run(x, result):
        w = x.wide()
        if x.dtype in FLOATS or x.dtype in COMPLEX:
            return f(w), EXACT
        return f(w.astype(np.float64)), EXACT
    return run


UNARY = {
    'neg': neg, 'abs': absolute, 'sign': sign,
    'floor': rounding(np.floor), 'ceil': rounding(np.ceil), 'round': rounding(np.rint),
    'isnan': classify(np.isnan), 'isinf': classify(np.isinf), 'isfinite': classify(np.isfinite),
    'logical_not': lambda x, result: (~nonzero(x), EXACT),
    'stop_gradient': lambda x, result: (x.array, EXACT),
}
for _name in REAL_UNARY:
    UNARY[_name] = (lambda name: lambda x, result: transcendental(name, x, result))(_name)


def integer_limits(dtype):
    info = np.iinfo(STORAGE[dtype])
    return int(info.min), int(info.max)


def integer_div(a, b, dtype):
    """Truncates toward zero; a zero divisor gives 0, MIN / -1 gives MIN."""
    lo, _ = integer_limits(dtype)
    overflow = (a == lo) & (b == -1) if lo < 0 else np.zeros(a.shape, bool)
    safe = np.where((b == 0) | overflow, 1, b).astype(a.dtype)
    q = (a - np.fmod(a, safe)) // safe
    return np.where(b == 0, 0, np.where(overflow, a, q)).astype(a.dtype)


def integer_mod(a, b):
    """The remainder with the dividend's sign; a zero divisor gives 0."""
    safe = np.where((b == 0) | (b == -1), 1, b).astype(a.dtype) if a.dtype.kind == 'i' else np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.fmod(a, safe)).astype(a.dtype)


def integer_pow(a, b):
    """Wraps; a negative exponent gives 0 unless the base is 1 or -1."""
    exponent = np.where(b < 0, 0, b) if b.dtype.kind == 'i' else b
    power = np.power(a, exponent.astype(a.dtype))
    if b.dtype.kind != 'i':
        return power
    odd = (b % 2) != 0
    negative = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(b < 0, negative, power).astype(a.dtype)


def arithmetic(op, int_op):
    def run(a, b, result):
        if result in COMPLEX:
            want = op(a.wide(), b.wide())
            exact = op in (np.add, np.subtract)
            return narrow(want, result), EXACT if exact else Tolerance('relative', k=8)
        if result in FLOATS:  # float64 results are correctly rounded once more
            x, y = a.wide(), b.wide()
            return narrow(op(x, y), result), EXACT
        if result == 'bool':
            raise KeyError(result)
        return int_op(a.array, b.array, result), EXACT
    return run


def wrapping(op):
    return lambda a, b, result: op(a, b).astype(STORAGE[result])


def real_binary(prim, f):
    def run(a, b, result):
        x, y = precise(a.wide(), result, prim), precise(b.wide(), result, prim)
        return narrow(f(x, y), result), ulps_for(prim, result)
    return run


def power(a, b, result):
    if result in COMPLEX:  # exp(b log a): its phase is as precise as b log a is large
        x, y = np.broadcast_arrays(a.wide(), b.wide())
        condition = 1 + np.abs(y * np.log(np.where(x == 0, 1, x)))
        return narrow(np.power(x, y), result), Tolerance('relative', k=16 * condition)
    if result in FLOATS:
        return real_binary('pow', np.power)(a, b, result)
    return integer_pow(a.array, b.array), EXACT


def extreme(larger):
    """maximum/minimum: NumPy's, NaN propagating (docs/nx.md)."""
    def run(a, b, result):
        f = np.maximum if larger else np.minimum
        if result in FLOATS:
            return narrow(f(a.wide(), b.wide()), result), EXACT
        return f(a.array, b.array), EXACT
    return run


def remainder(a, b, result):
    if result in FLOATS:
        return narrow(np.fmod(a.wide(), b.wide()), result), EXACT
    return integer_mod(a.array, b.array), EXACT


def compare(op):
    return lambda a, b, result: (op(a.wide(), b.wide()), EXACT)


def logical(op):
    return lambda a, b, result: (op(nonzero(a), nonzero(b)), EXACT)


BINARY = {
    'add': arithmetic(np.add, wrapping(np.add)), 'sub': arithmetic(np.subtract, wrapping(np.subtract)),
    'mul': arithmetic(np.multiply, wrapping(np.multiply)),
    'div': arithmetic(np.divide, lambda a, b, result: integer_div(*np.broadcast_arrays(a, b), result)),
    'pow': power, 'maximum': extreme(True), 'minimum': extreme(False),
    'atan2': real_binary('atan2', np.arctan2), 'mod': remainder,
    'less': compare(np.less), 'less_equal': compare(np.less_equal), 'greater': compare(np.greater),
    'greater_equal': compare(np.greater_equal), 'equal': compare(np.equal), 'not_equal': compare(np.not_equal),
    'logical_and': logical(np.logical_and), 'logical_or': logical(np.logical_or),
    'logical_xor': logical(np.logical_xor),
}


# ---- conversion (docs/nx.md: floats saturate into integers, NaN gives 0,
# a complex value into a real dtype keeps its real part, nonzero is true)

def to_integer(w, dtype):
    lo, hi = integer_limits(dtype)
    if w.dtype.kind in 'iub':
        return w.astype(STORAGE[dtype])  # wraps, as C++'s conversions do since C++20
    t = np.trunc(np.where(np.isnan(w), 0, w))
    out = np.zeros(w.shape, STORAGE[dtype])
    inside = (t >= lo) & (t <= hi) & (t != 2.0**63) & (t != 2.0**64)
    out[inside] = t[inside].astype(STORAGE[dtype])
    out[t >= hi] = hi
    out[t <= lo] = lo
    return out


def convert(x, params, result):
    w = x.wide()
    if result == 'bool':
        return w != 0, EXACT
    if x.dtype in COMPLEX and result not in COMPLEX:
        w = w.real
    if result in COMPLEX:
        return narrow(w.astype(np.complex128), result), EXACT
    if result not in FLOATS:
        return to_integer(w, result), EXACT
    if x.dtype in ('int64', 'uint64') and result != 'float64':
        return narrow(rounded_to_odd(w), result), EXACT
    return narrow(w.astype(np.float64), result), EXACT


def rounded_to_odd(w):
    """64-bit integers as doubles rounded to odd (toward zero, the last bit
    set where bits were lost): rounding those once more to a narrower float
    rounds the integer once."""
    def one(v):
        v = int(v)
        magnitude, shift = abs(v), max(abs(v).bit_length() - 53, 0)
        kept = (magnitude >> shift) | int(magnitude & ((1 << shift) - 1) != 0)
        return math.copysign(math.ldexp(kept, shift), v)
    return np.array([one(v) for v in w.ravel()], np.float64).reshape(w.shape)


# ---- reductions

def reduced_axes(params):
    return tuple(params['axes'])


def finite_magnitudes(w):
    """|w| in long double, with the non-finite elements as 0."""
    a = np.abs(w).astype(np.longdouble)
    return np.where(np.isfinite(a), a, 0)


def has_nan(w):
    return np.isnan(w.real) | np.isnan(w.imag) if np.iscomplexobj(w) else np.isnan(w)


def count(shape, axes):
    return int(np.prod([shape[a] for a in axes])) if axes else 1


def accumulation_roundoff(dtype):
    """16-bit floats are summed in float32 and rounded once (issue 25 item 12)."""
    return ROUNDOFF['float32'] if dtype in ('float16', 'bfloat16') else ROUNDOFF[dtype]


def bounded_sum(x, params, result):
    """Sums in any order: within (n + 1) roundoffs of the sum of magnitudes
    (checked where the finite elements cannot overflow; 16-bit: float32's
    roundoffs, then one rounding)."""
    axes = reduced_axes(params)
    if result not in FLOATS and result not in COMPLEX:
        return np.add.reduce(x.array, axis=axes, dtype=STORAGE[result]), EXACT
    w = x.wide()
    wide = np.clongdouble if result in COMPLEX else np.longdouble
    want = np.add.reduce(w.astype(wide), axis=axes)
    magnitude = np.add.reduce(finite_magnitudes(w), axis=axes)
    real = REAL_OF.get(result, result)
    bound = (count(w.shape, axes) + 1) * accumulation_roundoff(result) * magnitude + 2 * SMALLEST_SUBNORMAL[real]
    if result in ('float16', 'bfloat16'):  # then rounded once
        bound = bound + ROUNDOFF[result] * np.abs(want)
    return narrow(want, result), Tolerance('bound', bound=bound, unchecked=magnitude > LARGEST[real],
                                           nan_in=np.logical_or.reduce(has_nan(w), axis=axes))


def bounded_prod(x, params, result):
    """Products in any order: within (n + 2) roundoffs of the exact one,
    checked where no partial product of the finite nonzero elements can
    overflow or underflow."""
    axes = reduced_axes(params)
    if result not in FLOATS and result not in COMPLEX:
        return np.multiply.reduce(x.array, axis=axes, dtype=STORAGE[result]), EXACT
    w = x.wide()
    want = np.multiply.reduce(w.astype(np.clongdouble if result in COMPLEX else np.longdouble), axis=axes)
    a = finite_magnitudes(w)
    big = np.multiply.reduce(np.where(a > 1, a, 1), axis=axes)
    small = np.multiply.reduce(np.where((a < 1) & (a > 0), a, 1), axis=axes)
    real = REAL_OF.get(result, result)
    unchecked = (big > LARGEST[real]) | (small < SMALLEST_NORMAL[real])
    bound = (count(w.shape, axes) + 2) * ROUNDOFF[result] * np.abs(want)
    return narrow(want, result), Tolerance('bound', bound=bound, unchecked=unchecked,
                                           nan_in=np.logical_or.reduce(has_nan(w), axis=axes))


def reduce_extreme(larger):
    def run(x, params, result):
        f = np.maximum if larger else np.minimum
        want = f.reduce(x.wide() if result in FLOATS else x.array, axis=reduced_axes(params))
        return narrow(want, result) if result in FLOATS else want, EXACT
    return run


def reduce_logical(f):
    return lambda x, params, result: (f.reduce(nonzero(x), axis=reduced_axes(params)), EXACT)


def arg(f):
    return lambda x, params, result: (f(x.wide(), axis=params['axis']).astype(np.int32), EXACT)


# ---- layout

def pad(x, params, result):
    lo, hi, interior = params['lo'], params['hi'], params['interior']
    shape = [l + h + n + max(n - 1, 0) * i for n, l, h, i in zip(x.array.shape, lo, hi, interior)]
    fill, _ = convert_scalar(double(params['value']), result)
    out = np.full(shape, fill, dtype=x.array.dtype)
    index = tuple(slice(l, l + max(n - 1, 0) * (i + 1) + 1 if n else l, i + 1)
                  for n, l, i in zip(x.array.shape, lo, interior))
    out[index] = x.array
    return out, EXACT


def convert_scalar(value, dtype):
    array, _ = convert(Value('float64', np.array([value], np.float64)), {}, dtype)
    return array[0], EXACT


def normalized(indices, n):
    """Negative indices count from the end, out-of-range ones are clamped."""
    exact = np.array([int(i) for i in indices.ravel()], dtype=object)
    wrapped = np.array([i + n if i < 0 else i for i in exact], dtype=object)
    return np.array([min(max(i, 0), max(n - 1, 0)) for i in wrapped], np.int64).reshape(indices.shape)


def dropped(indices, n):
    """Drop mode: an index names its row when it is in [0, n), else none (-1)."""
    return np.array([int(i) if 0 <= int(i) < n else -1 for i in indices.ravel()], np.int64).reshape(indices.shape)


def take(x, i, params, result):
    axis = params['axis']
    if params.get('mode') == 'drop':  # zeros where an index names no row
        idx = dropped(i.array, x.array.shape[axis])
        taken = np.take(x.array, np.maximum(idx, 0), axis=axis) if x.array.shape[axis] else \
            np.zeros(x.array.shape[:axis] + idx.shape + x.array.shape[axis + 1:], x.array.dtype)
        outside = np.expand_dims(idx < 0, tuple(range(axis)) + tuple(range(axis + idx.ndim, taken.ndim)))
        return np.where(outside, np.zeros((), taken.dtype), taken), EXACT
    return np.take(x.array, normalized(i.array, x.array.shape[axis]), axis=axis), EXACT


def scatter_add(target, i, updates, params, result):
    """Each update slab added in the order of the indices, each add rounded
    (in drop mode those whose index names no row left out)."""
    axis = params['axis']
    n = target.array.shape[axis]
    drop = params.get('mode') == 'drop'
    idx = (dropped(i.array, n) if drop else normalized(i.array, n)).ravel()
    out = np.moveaxis(target.array.copy(), axis, 0)
    ups = updates.array.reshape(target.array.shape[:axis] + (idx.size,) + target.array.shape[axis + 1:])
    ups = np.moveaxis(ups, axis, 0)
    for k, row in enumerate(idx):
        if row < 0:
            continue
        added, _ = BINARY['add'](Value(result, out[row]), Value(result, ups[k]), result)
        out[row] = added
    return np.moveaxis(out, 0, axis), EXACT


def clamped_starts(starts, shape, sizes):
    return [min(max(int(s), 0), n - z) for s, n, z in zip(starts.ravel(), shape, sizes)]


def dynamic_slice(x, starts, params, result):
    at = clamped_starts(starts.array, x.array.shape, params['shape'])
    return x.array[tuple(slice(s, s + z) for s, z in zip(at, params['shape']))], EXACT


def dynamic_update_slice(x, update, starts, params, result):
    at = clamped_starts(starts.array, x.array.shape, update.array.shape)
    out = x.array.copy()
    out[tuple(slice(s, s + z) for s, z in zip(at, update.array.shape))] = update.array
    return out, EXACT


def slice_(x, params, result):
    return x.array[tuple(slice(a, b, c) for a, b, c in zip(params['starts'], params['stops'], params['steps']))], EXACT


def flip(x, params, result):
    return np.flip(x.array, axis=tuple(params['axes'])), EXACT  # (no axes: none flipped)


# ---- linear algebra

def matmul(a, b, params, result):
    """Integers exactly (wrapping); inexact dtypes within (k + 2) roundoffs of
    the products' magnitudes, as sums."""
    if result not in FLOATS and result not in COMPLEX:
        return np.matmul(a.array, b.array), EXACT
    wide = np.longdouble if result in FLOATS else np.clongdouble
    x, y = a.wide().astype(wide), b.wide().astype(wide)
    want = np.matmul(x, y)
    magnitude = np.matmul(finite_magnitudes(x), finite_magnitudes(y))
    bound = (x.shape[-1] + 2) * ROUNDOFF[result] * magnitude
    real = REAL_OF.get(result, result)
    nan_in = np.matmul(has_nan(x).astype(np.float64), np.ones(y.shape)) + np.matmul(np.ones(x.shape), has_nan(y).astype(np.float64)) > 0
    return narrow(want, result), Tolerance('bound', bound=bound, unchecked=magnitude > LARGEST[real], nan_in=nan_in)


def factorization(f):
    """solve and cholesky against NumPy's (LAPACK's) in double precision:
    well conditioned operands, a relative error of the result's precision
    (float16 and bfloat16 compute in float32); NaN where NumPy refuses."""
    def run(*operands_params_result):
        *operands, params, result = operands_params_result
        wide = [o.wide().astype(np.complex128 if result in COMPLEX else np.float64) for o in operands]
        try:
            want = f(*wide)
        except np.linalg.LinAlgError:
            return None, Tolerance('nan')
        scale = max(float(np.max(np.abs(want))) if want.size else 1.0, 1.0)
        precision = ROUNDOFF['float32'] if result in ('float16', 'bfloat16') else ROUNDOFF[result]
        bound = np.full(want.shape, 1e3 * precision * scale) + ROUNDOFF[result] * np.abs(want) * 2
        return narrow(want, result), Tolerance('bound', bound=bound)
    return run


def solve(a, b):
    if a.shape[-1] == 0:
        return np.zeros(b.shape, a.dtype)
    return np.linalg.solve(a, b)


def cholesky(a):
    if a.shape[-1] == 0:
        return a.copy()
    return np.linalg.cholesky(a)


# ---- random numbers: Threefry-2x32-20 (ops/threefry.hpp), written again

def threefry2x32(k0, k1, c0, c1):
    rotation = (13, 15, 26, 6, 17, 29, 16, 24)
    mask = np.uint64(0xFFFFFFFF)
    k0, k1, c0, c1 = (np.asarray(v, np.uint64) for v in (k0, k1, c0, c1))
    schedule = (k0, k1, k0 ^ k1 ^ np.uint64(0x1BD11BDA))
    x0, x1 = (c0 + schedule[0]) & mask, (c1 + schedule[1]) & mask
    for r in range(20):
        x0 = (x0 + x1) & mask
        d = np.uint64(rotation[r % 8])
        x1 = (((x1 << d) | (x1 >> (np.uint64(32) - d))) & mask) ^ x0
        if r % 4 == 3:
            s = r // 4 + 1
            x0 = (x0 + schedule[s % 3]) & mask
            x1 = (x1 + schedule[(s + 1) % 3] + np.uint64(s)) & mask
    return x0, x1


def random_bits(key, params, result):
    shape = tuple(params['shape'])
    n = int(np.prod(shape)) if shape else 1
    keys = key.array.reshape(-1, 2).astype(np.uint64)
    blocks = np.arange((n + 1) // 2, dtype=np.uint64)
    rows = []
    for k0, k1 in keys:
        w0, w1 = threefry2x32(k0, k1, blocks & np.uint64(0xFFFFFFFF), blocks >> np.uint64(32))
        rows.append(np.stack([w0, w1], axis=-1).ravel()[:n])
    return np.array(rows, np.uint32).reshape(key.array.shape[:-1] + shape), EXACT


# ---- collectives (each lane's value of a map of params.shape[0] lanes)

def lanes_gather(x, params, result):
    """Every lane: the whole of x."""
    n = x.array.shape[0]
    return np.broadcast_to(x.array, (n,) + x.array.shape).copy(), EXACT


def lanes_sum(x, params, result):
    """Lane i: the sum of every lane's row i (x: each lane's rows, stacked)."""
    return bounded_sum(x, {'axes': [0]}, result)


# ---- the ranks' collectives in the world of one process the cases run in
# (tests/ranks runs them on several): the sum over one rank is 0 + x, in
# nx::sum's order (an accumulator starting at 0: -0 becomes +0).

def plus_zero(x, result, row=None):
    """0 + x (or 0 + x[row]), in the result's dtype."""
    if result not in FLOATS and result not in COMPLEX:
        return x.array if row is None else x.array[row]
    w = x.wide() if row is None else x.wide()[row]
    return narrow(w + np.zeros_like(w), result)


def ranks_permute(x, params, result):
    """Rank 0 keeps its value where a pair (0, 0) names it, else zeros."""
    kept = 0 in params.get('stops', [])
    return (x.array.copy() if kept else np.zeros_like(x.array)), EXACT


def with_params(f):
    return lambda operands, params, result: f(*operands, params, result)


REFERENCES = {}
for _name, _f in UNARY.items():
    REFERENCES[_name] = (lambda f: lambda ops, params, result: f(ops[0], result))(_f)
for _name, _f in BINARY.items():
    REFERENCES[_name] = (lambda f: lambda ops, params, result: f(ops[0], ops[1], result))(_f)
REFERENCES.update({
    'select': lambda ops, params, result: (np.where(ops[0].array, ops[1].array, ops[2].array), EXACT),
    'convert': with_params(convert),
    'reduce_sum': with_params(bounded_sum), 'reduce_prod': with_params(bounded_prod),
    'reduce_max': with_params(reduce_extreme(True)), 'reduce_min': with_params(reduce_extreme(False)),
    'reduce_and': with_params(reduce_logical(np.logical_and)), 'reduce_or': with_params(reduce_logical(np.logical_or)),
    'argmax': with_params(arg(np.argmax)), 'argmin': with_params(arg(np.argmin)),
    'reshape': lambda ops, params, result: (ops[0].array.reshape(params['shape']), EXACT),
    'transpose': lambda ops, params, result: (np.transpose(ops[0].array, params['axes']), EXACT),
    'broadcast': lambda ops, params, result: (np.broadcast_to(ops[0].array, params['shape']), EXACT),
    'slice': with_params(slice_), 'pad': with_params(pad),
    'concatenate': lambda ops, params, result: (np.concatenate([o.array for o in ops], params['axis']), EXACT),
    'flip': with_params(flip), 'take': with_params(take), 'scatter_add': with_params(scatter_add),
    'dynamic_slice': with_params(dynamic_slice), 'dynamic_update_slice': with_params(dynamic_update_slice),
    'matmul': with_params(matmul), 'solve': with_params(factorization(solve)),
    'cholesky': with_params(factorization(cholesky)),
    'random_bits': with_params(random_bits),
    'lanes_gather': with_params(lanes_gather), 'lanes_sum': with_params(lanes_sum),
    'ranks_sum': lambda ops, params, result: (plus_zero(ops[0], result), EXACT),
    'ranks_gather': lambda ops, params, result: (ops[0].array[None].copy(), EXACT),
    'ranks_scatter_sum': lambda ops, params, result: (plus_zero(ops[0], result, 0), EXACT),
    'ranks_permute': with_params(ranks_permute),
    'ranks_index': lambda ops, params, result: (ops[0].array.copy(), EXACT),  # (x + rank 0)
})

# NumPy refuses these as rune does: an extreme (or its index) of nothing.
def refuses(prim, operands, params):
    if prim in ('reduce_max', 'reduce_min'):
        return any(operands[0].array.shape[a] == 0 for a in params['axes'])
    if prim in ('argmax', 'argmin'):
        return operands[0].array.shape[params['axis']] == 0
    return False


# ---- composites: nx functions built of primitives (cases.cpp's composite_cases)

def every_axis(params, ndim):
    """The axes of an nx reduction: none given reduces every one."""
    return {'axes': params['axes'] or list(range(ndim))}


def mean(ops, params, result):
    """As sum, divided by the count once."""
    x = ops[0]
    params = every_axis(params, x.array.ndim)
    axes = reduced_axes(params)
    n = count(x.array.shape, axes)
    total, tolerance = bounded_sum(x, params, result)
    w = x.wide()
    wide = np.clongdouble if result in COMPLEX else np.longdouble
    nan = complex(np.nan, np.nan) if result in COMPLEX else np.nan
    want = np.add.reduce(w.astype(wide), axis=axes) / n if n else np.full(total.shape, nan, wide)
    bound = (tolerance.bound / max(n, 1)) + 2 * ROUNDOFF[result] * np.abs(want)
    return narrow(want, result), Tolerance('bound', bound=bound, unchecked=tolerance.unchecked,
                                           nan_in=tolerance.nan_in | (n == 0))


def logsumexp(ops, params, result):
    """log(sum(exp(x))), computed stably in long double; within (n + 8)
    roundoffs of max(|result|, 1)."""
    x = ops[0]
    axes = tuple(every_axis(params, x.array.ndim)['axes'])
    w = x.wide().astype(np.longdouble)
    top = np.maximum.reduce(np.where(np.isnan(w), -np.inf, w), axis=axes, keepdims=True, initial=-np.inf)
    shift = np.where(np.isfinite(top), top, 0)
    want = np.log(np.add.reduce(np.exp(w - shift), axis=axes, keepdims=True)) + shift
    want = np.where(np.isinf(top) & (top > 0), np.inf, want)
    want = np.squeeze(want, axis=axes) if axes else want
    bound = (count(x.array.shape, axes) + 8) * ROUNDOFF[result] * np.maximum(np.abs(want), 1)
    nan_in = np.logical_or.reduce(np.isnan(w), axis=axes)
    want = np.where(nan_in, np.nan, want)
    return narrow(want, result), Tolerance('bound', bound=bound, unchecked=np.zeros(want.shape, bool), nan_in=nan_in)


def sigmoid(ops, params, result):
    """1 / (1 + exp(-x)) (docs/nx.md), within 4 ulps: a composite of
    primitives, each rounding (16-bit ones too)."""
    w = ops[0].wide().astype(np.longdouble)
    return narrow(1 / (1 + np.exp(-w)), result), Tolerance('ulps', ulps=4)


def numpy_sum(ops, params, result):
    """NumPy's sum without a dtype: integers of fewer bits than the
    platform's sum in int64 (unsigned: uint64)."""
    return np.sum(ops[0].array), EXACT


COMPOSITES = {'mean': mean, 'logsumexp': logsumexp, 'sigmoid': sigmoid, 'sum': numpy_sum}
