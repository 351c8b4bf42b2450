"""Tensors of the differential suite as NumPy arrays: decoding the cases'
hex, rounding to each dtype (bfloat16 included, which NumPy lacks: its
arrays hold the bits as uint16), and distances in ulps."""
import numpy as np

np.seterr(all='ignore')  # NaN, infinities and overflow are what the suite is about

STORAGE = {
    'bool': np.bool_, 'int8': np.int8, 'int16': np.int16, 'int32': np.int32, 'int64': np.int64,
    'uint8': np.uint8, 'uint32': np.uint32, 'uint64': np.uint64, 'float16': np.float16,
    'bfloat16': np.uint16, 'float32': np.float32, 'float64': np.float64,
    'complex64': np.complex64, 'complex128': np.complex128,
}
FLOATS = ('float16', 'bfloat16', 'float32', 'float64')
COMPLEX = ('complex64', 'complex128')
REAL_OF = {'complex64': 'float32', 'complex128': 'float64'}
# The unit roundoff (half an ulp of 1) of each inexact dtype.
ROUNDOFF = {'float16': 2.0**-11, 'bfloat16': 2.0**-8, 'float32': 2.0**-24, 'float64': 2.0**-53,
            'complex64': 2.0**-24, 'complex128': 2.0**-53}
LARGEST = {'float16': 65504.0, 'bfloat16': 3.3895313892515355e38, 'float32': 3.4028234663852886e38,
           'float64': 1.7976931348623157e308}
SMALLEST_SUBNORMAL = {'float16': 2.0**-24, 'bfloat16': 2.0**-133, 'float32': 2.0**-149, 'float64': 2.0**-1074}
SMALLEST_NORMAL = {'float16': 2.0**-14, 'bfloat16': 2.0**-126, 'float32': 2.0**-126, 'float64': 2.0**-1022}
BITS = {'float16': np.uint16, 'bfloat16': np.uint16, 'float32': np.uint32, 'float64': np.uint64}


class Value:
    """A tensor: its dtype's name and its elements (bfloat16: the bits)."""

    def __init__(self, dtype, array):
        self.dtype = dtype
        self.array = array

    def wide(self):
        """The elements exactly: floats as float64, complex as complex128."""
        if self.dtype == 'bfloat16':
            return bf16_to_float64(self.array)
        if self.dtype in FLOATS:
            return self.array.astype(np.float64)
        if self.dtype in COMPLEX:
            return self.array.astype(np.complex128)
        return self.array


def decode(t):
    raw = bytes.fromhex(t['hex'])
    return Value(t['dtype'], np.frombuffer(raw, dtype=STORAGE[t['dtype']]).reshape(t['shape']).copy())


def double(hex_text):
    return float(np.frombuffer(bytes.fromhex(hex_text), dtype='<f8')[0])


def bf16_to_float64(bits):
    bits = np.asarray(bits, np.uint16)
    wide = np.atleast_1d(bits).astype(np.uint32) << np.uint32(16)
    return wide.view(np.float32).astype(np.float64).reshape(bits.shape)


def float64_to_bf16(x):
    """bfloat16 bits of x, rounded once to nearest even: to float32 by
    rounding to odd (exact but for a sticky last bit), then to bfloat16."""
    x = np.asarray(x, np.float64)
    with np.errstate(over='ignore', invalid='ignore'):
        f = x.astype(np.float32)
        wide = f.astype(np.float64)
        finite = np.isfinite(x)
        over = finite & (np.abs(wide) > np.abs(x))
        f = np.atleast_1d(np.where(over, np.nextafter(f, np.float32(0)), f))
        inexact = finite & (f.astype(np.float64).reshape(x.shape) != x)
    bits = (f.view(np.uint32).reshape(x.shape) | inexact.astype(np.uint32))
    wide = bits.astype(np.uint64)
    half = np.uint64(0x7FFF) + ((wide >> np.uint64(16)) & np.uint64(1))
    rounded = ((wide + half) >> np.uint64(16)).astype(np.uint16)
    quiet_nan = ((wide >> np.uint64(16)) | np.uint64(0x0040)).astype(np.uint16)
    return np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint16)


def narrow(x, dtype):
    """x (float64, long double or complex) rounded once to dtype's storage."""
    if dtype == 'bfloat16':
        return float64_to_bf16(np.asarray(x, np.float64))
    with np.errstate(over='ignore', invalid='ignore'):
        return np.asarray(x).astype(STORAGE[dtype])


def bits_of(array, dtype):
    """The bits of float elements as unsigned integers."""
    array = np.asarray(array)
    return np.ascontiguousarray(np.atleast_1d(array)).view(BITS[dtype]).reshape(array.shape)


def ulp_distance(a, b, dtype):
    """The number of representable values between a and b (same sign
    zeros apart by 0, opposite ones by 1), as float64."""
    width = np.dtype(BITS[dtype]).itemsize * 8
    sign = np.uint64(1) << np.uint64(width - 1)
    ua, ub = bits_of(a, dtype).astype(np.uint64), bits_of(b, dtype).astype(np.uint64)
    ma, mb = ua & ~sign, ub & ~sign
    na, nb = (ua & sign) != 0, (ub & sign) != 0
    same = na == nb
    with np.errstate(over='ignore'):
        apart = np.where(ma > mb, ma - mb, mb - ma)
        across = ma + mb + np.uint64(1)
    return np.where(same, apart, across).astype(np.float64)
