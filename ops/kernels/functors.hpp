// What each elementwise primitive computes on one element (scalar) and on a
// SIMD batch of floats or doubles (simd). One struct per primitive.
//
// Integer semantics (defined for every input, unlike C++): + - * and neg wrap
// around; division and mod truncate toward zero (a = div(a,b)*b + mod(a,b));
// a zero divisor gives 0; MIN / -1 wraps to MIN. pow with a negative integer
// exponent gives 0 unless the base is 1 or -1.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "ops/kernels/xsimd.hpp"

#include "ops/kernels/f32_math.hpp"
#include "ops/kernels/f64_math.hpp"
#include "ops/primitive.hpp"

namespace nx::ops::kernels {

template <class T> struct is_complex_t : std::false_type {};
template <class T> struct is_complex_t<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_cplx = is_complex_t<T>::value;
template <class T> inline constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Wrapping integer arithmetic through the unsigned type.
template <class T> T wrap_add(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) + U(b)); }
template <class T> T wrap_sub(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) - U(b)); }
template <class T> T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no int promotion
  return T(U(W(U(a)) * W(U(b))));
}

template <Prim P> struct Op;

// xsimd's exp and log lose their accuracy where results or arguments are
// subnormal (or beyond): the lanes not `ok` are computed by the C library
// instead. The choice depends on each element's value, never its position.
// (The lanes' redo is out of line: the common path inlines into the loops.)
template <class B, class F>
[[gnu::noinline, gnu::cold]] B redo_lanes(B x, B fast, typename B::batch_bool_type ok, F exact) {
  using T = typename B::value_type;
  alignas(64) T in[B::size], out[B::size], keep[B::size];
  x.store_aligned(in);
  fast.store_aligned(out);
  xsimd::select(ok, B(1), B(0)).store_aligned(keep);
  for (std::size_t k = 0; k < B::size; ++k)
    if (keep[k] == 0) out[k] = exact(in[k]);
  return B::load_aligned(out);
}
template <class B, class F> B guarded(B x, B fast, typename B::batch_bool_type ok, F exact) {
  if (xsimd::all(ok)) [[likely]] return fast;
  return redo_lanes(x, fast, ok, exact);
}
// The element type of a batch B, or B itself for a scalar.
template <class B> struct value_of { using type = typename B::value_type; };
template <> struct value_of<float> { using type = float; };
template <> struct value_of<double> { using type = double; };
template <class B> using value_t = typename value_of<B>::type;
template <class B> constexpr double min_exponent() {
  return std::numeric_limits<value_t<B>>::min_exponent - 1;  // -1022, -126
}
// Exponents where results stay normal, one short of the limits: 1022, 126.
template <class B> constexpr double max_exponent() {
  return std::numeric_limits<value_t<B>>::max_exponent - 2;
}
inline constexpr double ln2 = 0.6931471805599453;
// lo <= x <= hi (false for NaN, which the C library then handles).
template <class B> auto in_range(B x, double lo, double hi) { return x >= B(lo) && x <= B(hi); }
// Positive, normal and finite.
template <class B> auto normal(B x) {
  using T = value_t<B>;
  return x >= B(std::numeric_limits<T>::min()) && x <= B(std::numeric_limits<T>::max());
}

// f(-0) = -0 for the odd functions whose SIMD algorithms lose the sign of
// a zero argument (xsimd's expm1 and log1p give +0), as C's do.
template <class B> B zero_kept(B x, B r) { return xsimd::select(x == B(0), x, r); }
// floor, ceil and round keep their argument's sign (floor(-0) = -0,
// ceil(-0.5) = -0): xsimd's SSE2 loops, which have no rounding instruction,
// compute them by an integer conversion that gives +0.
template <class B> B sign_kept(B x, B r) { return xsimd::copysign(r, x); }

#define NX_UNARY_FLOAT(P, scalar_expr, simd_expr)                                 \
  template <> struct Op<Prim::P> {                                                \
    template <class T> static T scalar(T x) { using std::P; return scalar_expr; } \
    template <class B> static B simd(B x) { return simd_expr; }                   \
  };
NX_UNARY_FLOAT(exp2, exp2(x), guarded(x, xsimd::exp2(x), in_range(x, min_exponent<B>(), max_exponent<B>()), [](auto v) { return std::exp2(v); }))
NX_UNARY_FLOAT(log2, log2(x), guarded(x, xsimd::log2(x), normal(x), [](auto v) { return std::log2(v); }))
NX_UNARY_FLOAT(log1p, log1p(x), zero_kept(x, xsimd::log1p(x)))
NX_UNARY_FLOAT(expm1, expm1(x), zero_kept(x, guarded(x, xsimd::expm1(x), x <= B(max_exponent<B>() * ln2), [](auto v) { return std::expm1(v); })))
NX_UNARY_FLOAT(sqrt, sqrt(x), xsimd::sqrt(x))
NX_UNARY_FLOAT(sinh, sinh(x), guarded(x, xsimd::sinh(x), in_range(x, -max_exponent<B>() * ln2, max_exponent<B>() * ln2), [](auto v) { return std::sinh(v); }))
NX_UNARY_FLOAT(cosh, cosh(x), guarded(x, xsimd::cosh(x), in_range(x, -max_exponent<B>() * ln2, max_exponent<B>() * ln2), [](auto v) { return std::cosh(v); }))
NX_UNARY_FLOAT(asin, asin(x), xsimd::asin(x))
NX_UNARY_FLOAT(acos, acos(x), xsimd::acos(x))
NX_UNARY_FLOAT(atan, atan(x), xsimd::atan(x))
// erf has no SIMD loop: xsimd's is off by tens of ulps in places.
template <> struct Op<Prim::erf> {
  template <class T> static T scalar(T x) { return std::erf(x); }
};
NX_UNARY_FLOAT(floor, floor(x), sign_kept(x, xsimd::floor(x)))
NX_UNARY_FLOAT(ceil, ceil(x), sign_kept(x, xsimd::ceil(x)))
#undef NX_UNARY_FLOAT

// exp, log and tanh: float64 runs f64_math.hpp's algorithms (within one ulp,
// the same bits in the scalar loops and on every instruction set), float32
// xsimd's (exp and tanh: f32_math.hpp's) on batches and the C library's on
// single elements. Where the float64 algorithm does not apply (`f64_ok`
// false: out of its range, subnormal, inf, NaN) the C library computes the
// element, in a batch lane by lane (guarded). The batch code is inlined into
// the row loops: a call per batch costs a good part of a float32 exp.
#define NX_UNARY_F64(P, f64_ok, f64_core, f32_simd)                                    \
  template <> struct Op<Prim::P> {                                                     \
    template <class T> static T scalar(T x) {                                          \
      using B [[maybe_unused]] = T;                                                    \
      if constexpr (std::is_same_v<T, double>) return (f64_ok) ? f64_core : std::P(x); \
      else return std::P(x);                                                           \
    }                                                                                  \
    template <class B> [[gnu::always_inline]] static B simd(B x) {                     \
      if constexpr (std::is_same_v<value_t<B>, double>)                                \
        return guarded(x, f64_core, (f64_ok), [](auto v) { return std::P(v); });       \
      else return f32_simd;                                                            \
    }                                                                                  \
  };
// (float64 exp's results stay above 2^-1000: the small correction to 2^(k/128)
// must not be subnormal.)
NX_UNARY_F64(exp, in_range(x, -1000 * ln2, max_exponent<B>() * ln2), f64::exp_core(x),
             guarded(x, f32::exp_core(x), in_range(x, f32::exp_lowest, f32::exp_highest),
                     [](auto v) { return std::exp(v); }))
NX_UNARY_F64(log, normal(x), f64::log_core(x),
             guarded(x, xsimd::log(x), normal(x), [](auto v) { return std::log(v); }))
#undef NX_UNARY_F64
// sin, cos and tan: float64 by f64_math.hpp's algorithms, float32 computed
// in float64 by f32_math.hpp's and rounded once, up to 1e4 in magnitude; the
// C library (double) beyond. So an element's bits depend on its value alone,
// in the scalar loops and on every instruction set (xsimd's reduce by the
// largest argument of a whole batch: a lane's last bit would depend on its
// neighbours). (The cores' expressions name their argument x.)
#define NX_TRIG(P, f64_core, f32_core)                                                            \
  template <> struct Op<Prim::P> {                                                                \
    template <bool F32> static double in_double(double x) {                                       \
      if (!in_range(x, -1e4, 1e4)) return std::P(x);                                              \
      if constexpr (F32) return f32_core;                                                         \
      else return f64_core;                                                                       \
    }                                                                                             \
    template <class T> static T scalar(T x) {                                                     \
      if constexpr (std::is_same_v<T, double>) return in_double<false>(x);                        \
      else if constexpr (std::is_same_v<T, float>) return T(in_double<true>(double(x)));          \
      else return std::P(x); /* complex */                                                        \
    }                                                                                             \
    template <class B> [[gnu::always_inline]] static B simd(B x) {                                \
      if constexpr (std::is_same_v<value_t<B>, double>)                                           \
        return guarded(x, f64_core, in_range(x, -1e4, 1e4), [](auto v) { return std::P(v); });   \
      else                                                                                        \
        return f32::widened(x, [](auto x) {                                                       \
          return guarded(x, f32_core, in_range(x, -1e4, 1e4), [](auto v) { return std::P(v); }); \
        });                                                                                       \
    }                                                                                             \
  };
NX_TRIG(sin, f64::sincos_core<false>(x), f32::trig_core<f32::Trig::sin>(x))
NX_TRIG(cos, f64::sincos_core<true>(x), f32::trig_core<f32::Trig::cos>(x))
NX_TRIG(tan, f64::tan_core(x), f32::trig_core<f32::Trig::tan>(x))
#undef NX_TRIG
// tanh holds everywhere (NaN, inf and large arguments included).
template <> struct Op<Prim::tanh> {
  template <class T> static T scalar(T x) {
    if constexpr (std::is_same_v<T, double>) return f64::tanh_core(x);
    else return std::tanh(x);
  }
  template <class B> [[gnu::always_inline]] static B simd(B x) {
    if constexpr (std::is_same_v<value_t<B>, double>) return f64::tanh_core(x);
    else return f32::tanh_core(x);
  }
};

// Rounds half to even, as NumPy and PyTorch do.
template <> struct Op<Prim::round> {
  template <class T> static T scalar(T x) { return std::nearbyint(x); }
  template <class B> static B simd(B x) { return sign_kept(x, xsimd::nearbyint(x)); }
};
template <> struct Op<Prim::rsqrt> {
  template <class T> static T scalar(T x) { return T(1) / std::sqrt(x); }
  template <class B> static B simd(B x) { return B(1) / xsimd::sqrt(x); }
};
template <> struct Op<Prim::neg> {
  template <class T> static T scalar(T x) {
    if constexpr (is_int<T>) return wrap_sub(T(0), x);
    else return -x;
  }
  // (flips the sign bit: xsimd's AVX-512 negation is 0 - x, +0 for +0)
  template <class B> static B simd(B x) { return xsimd::bitwise_xor(x, B(value_t<B>(-0.))); }
};
template <> struct Op<Prim::abs> {
  template <class T> static auto scalar(T x) {
    if constexpr (is_cplx<T>) return std::abs(x);
    else if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (is_int<T>) return x < 0 ? wrap_sub(T(0), x) : x;
    else return std::fabs(x);
  }
  template <class B> static B simd(B x) { return xsimd::abs(x); }
};
// sign keeps zeros (and their sign) and NaN; of a complex z it is z/|z|.
template <> struct Op<Prim::sign> {
  template <class T> static T scalar(T x) {
    if constexpr (is_cplx<T>) return x == T(0) ? x : x / std::abs(x);
    else if constexpr (std::is_unsigned_v<T>) return T(x > 0);
    else if constexpr (is_int<T>) return T((x > 0) - (x < 0));
    else return x > 0 ? T(1) : x < 0 ? T(-1) : x;
  }
  template <class B> static B simd(B x) {
    return xsimd::select(x > B(0), B(1), xsimd::select(x < B(0), B(-1), x));
  }
};

template <> struct Op<Prim::stop_gradient> {
  template <class T> static T scalar(T x) { return x; }
};

// Predicates: bool results, scalar only.
template <> struct Op<Prim::isnan> {
  template <class T> static bool scalar(T x) {
    if constexpr (is_cplx<T>) return std::isnan(x.real()) || std::isnan(x.imag());
    else if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
    else return false;
  }
};
template <> struct Op<Prim::isinf> {
  template <class T> static bool scalar(T x) {
    if constexpr (is_cplx<T>) return std::isinf(x.real()) || std::isinf(x.imag());
    else if constexpr (std::is_floating_point_v<T>) return std::isinf(x);
    else return false;
  }
};
template <> struct Op<Prim::isfinite> {
  template <class T> static bool scalar(T x) {
    if constexpr (is_cplx<T>) return std::isfinite(x.real()) && std::isfinite(x.imag());
    else if constexpr (std::is_floating_point_v<T>) return std::isfinite(x);
    else return true;
  }
};
template <> struct Op<Prim::logical_not> {
  template <class T> static bool scalar(T x) { return x == T(0); }
};

// ---- binary
template <> struct Op<Prim::add> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (is_int<T>) return wrap_add(a, b);
    else return a + b;
  }
  template <class B> static B simd(B a, B b) { return a + b; }
};
template <> struct Op<Prim::sub> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (is_int<T>) return wrap_sub(a, b);
    else return a - b;
  }
  template <class B> static B simd(B a, B b) { return a - b; }
};
template <> struct Op<Prim::mul> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (is_int<T>) return wrap_mul(a, b);
    else return a * b;
  }
  template <class B> static B simd(B a, B b) { return a * b; }
};
template <> struct Op<Prim::div> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (is_int<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
      return T(a / b);
    } else {
      return a / b;
    }
  }
  template <class B> static B simd(B a, B b) { return a / b; }
};
template <> struct Op<Prim::mod> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (is_int<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == T(-1)) return 0;
      return T(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
// Complex powers as NumPy's: z^0 = 1 (0^0 too); 0^y = 0 for real y > 0 and
// NaN + NaNj otherwise; a whole real exponent below 100 in magnitude by
// repeated squaring ((1+1j)^2 = 2j exactly; a negative one then inverted);
// any other exp(y log z) (C's cpow, whose 0^0 is NaN).
template <class T> T complex_pow(T a, T b) {
  using R = typename T::value_type;
  if (b == T(0)) return T(1);
  if (a == T(0)) {
    const R nan = std::numeric_limits<R>::quiet_NaN();
    return b.imag() == 0 && b.real() > 0 ? T(0) : T(nan, nan);
  }
  const R n = b.real();
  if (b.imag() != 0 || n != std::trunc(n) || !(std::fabs(n) < 100)) return std::pow(a, b);
  if (n == 1) return a;  // (unrolled, as NumPy's: 1 * z is NaN + NaNj for an infinite z)
  if (n == 2) return a * a;
  if (n == 3) return a * (a * a);
  T product(1), square = a;
  for (int e = int(std::fabs(n));; e >>= 1) {
    if (e & 1) product *= square;
    if (e <= 1) break;
    square *= square;
  }
  return n < 0 ? T(1) / product : product;
}

template <> struct Op<Prim::pow> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (is_int<T>) {
      if constexpr (std::is_signed_v<T>)
        if (b < 0) return a == 1 ? T(1) : a == T(-1) ? T((b & 1) ? -1 : 1) : T(0);
      T result = 1;
      for (auto e = b; e; e >>= 1) {
        if (e & 1) result = wrap_mul(result, a);
        a = wrap_mul(a, a);
      }
      return result;
    } else if constexpr (is_cplx<T>) {
      return complex_pow(a, b);
    } else {
      return std::pow(a, b);
    }
  }
};
// maximum and minimum propagate NaN (as NumPy's).
template <> struct Op<Prim::maximum> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return (a > b || a != a) ? a : b;
  }
  template <class B> static B simd(B a, B b) { return xsimd::select(a > b || xsimd::isnan(a), a, b); }
};
template <> struct Op<Prim::minimum> {
  template <class T> static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return (a < b || a != a) ? a : b;
  }
  template <class B> static B simd(B a, B b) { return xsimd::select(a < b || xsimd::isnan(a), a, b); }
};
// atan2 has no SIMD loop: xsimd's is NaN at (±0, ±0) and (±inf, ±inf), where
// C gives ±0, ±pi, ±pi/4 and ±3pi/4 (C99 Annex F).
template <> struct Op<Prim::atan2> {
  template <class T> static T scalar(T a, T b) { return std::atan2(a, b); }
};

#define NX_COMPARE(P, expr)                                             \
  template <> struct Op<Prim::P> {                                      \
    template <class T> static bool scalar(T a, T b) { return expr; }    \
  };
NX_COMPARE(less, a < b)
NX_COMPARE(less_equal, a <= b)
NX_COMPARE(greater, a > b)
NX_COMPARE(greater_equal, a >= b)
NX_COMPARE(equal, a == b)
NX_COMPARE(not_equal, a != b)
NX_COMPARE(logical_and, a != T(0) && b != T(0))
NX_COMPARE(logical_or, a != T(0) || b != T(0))
NX_COMPARE(logical_xor, (a != T(0)) != (b != T(0)))
#undef NX_COMPARE

}  // namespace nx::ops::kernels
