// Scalar row loops shared by the portable table and the SIMD tables.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include "ops/kernels/functors.hpp"
#include "ops/kernels/kernels.hpp"

namespace nx::ops::kernels {

// 16-bit floats compute in float and round back.
template <class T> struct compute { using type = T; };
template <> struct compute<float16_t> { using type = float; };
template <> struct compute<bfloat16_t> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

template <class T> constexpr std::uint8_t class_bit() {
  if constexpr (std::is_same_v<T, bool>) return B;
  else if constexpr (is_cplx<T>) return C;
  else if constexpr (std::is_integral_v<T>) return std::is_signed_v<T> ? S : U;
  else return F;
}

// Conversions into float16 and bfloat16 round once, to nearest even, from
// the exact value: through a float rounded "to odd" (toward zero, its last
// bit set when inexact), which then rounds to the fewer bits correctly, where
// rounding to nearest twice could not (1 + 2^-11 + 2^-40 as a float is the
// tie 1 + 2^-11, which float16 rounds down to 1).
inline float float_rounded_to_odd(double x) {
  const float nearest = float(x);
  if (double(nearest) == x || x != x) return nearest;
  const float toward_zero = std::fabs(double(nearest)) > std::fabs(x) ? std::nextafter(nearest, 0.f) : nearest;
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(toward_zero) | 1u);
}
// A 64-bit integer as a double rounded to odd (beyond 2^53 a double drops bits).
template <class I> double double_rounded_to_odd(I x) {
  using U = std::make_unsigned_t<I>;
  const bool negative = x < 0;
  const U magnitude = negative ? U(0) - U(x) : U(x);
  const int drop = std::max(0, int(std::bit_width(magnitude)) - std::numeric_limits<double>::digits);
  const U dropped = magnitude & ((U(1) << drop) - 1);
  const U kept = (magnitude - dropped) | (dropped ? U(1) << drop : U(0));
  return negative ? -double(kept) : double(kept);
}
// The float that a real (not complex) value rounds to a 16-bit float through.
template <class In> float float_for_16_bits(In x) {
  if constexpr (std::is_same_v<In, float> || std::is_same_v<In, bool>) return float(x);
  else if constexpr (std::is_integral_v<In> && sizeof(In) == 8) return float_rounded_to_odd(double_rounded_to_odd(x));
  else return float_rounded_to_odd(double(x));  // (integers up to 32 bits are exact as doubles)
}

template <class Out, class In> Out convert_value(In x) {
  if constexpr (std::is_same_v<Out, In>) {
    return x;
  } else if constexpr (std::is_same_v<In, float16_t> || std::is_same_v<In, bfloat16_t>) {
    return convert_value<Out>(float(x));
  } else if constexpr ((std::is_same_v<Out, float16_t> || std::is_same_v<Out, bfloat16_t>) && is_cplx<In>) {
    return convert_value<Out>(x.real());
  } else if constexpr (std::is_same_v<Out, float16_t> || std::is_same_v<Out, bfloat16_t>) {
    return Out(float_for_16_bits(x));
  } else if constexpr (std::is_same_v<Out, bool>) {
    return x != In(0);
  } else if constexpr (is_cplx<In> && is_cplx<Out>) {
    using V = typename Out::value_type;
    return Out(V(x.real()), V(x.imag()));
  } else if constexpr (is_cplx<In> && !is_cplx<Out>) {
    return convert_value<Out>(x.real());  // the real part, as NumPy
  } else if constexpr (is_cplx<Out>) {
    return Out(typename Out::value_type(x));
  } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<In>) {
    // saturate; NaN gives 0 (C++ leaves both undefined)
    if (x != x) return Out(0);
    if (x <= In(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
    if (x >= In(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
    return Out(x);
  } else {
    return Out(x);
  }
}

template <Prim P, class T> using unary_result_t =
    std::conditional_t<info(P).result == ResultDType::Bool, bool,
                       std::conditional_t<info(P).result == ResultDType::Real && is_cplx<T>,
                                          typename std::conditional_t<is_cplx<T>, T, std::complex<float>>::value_type,
                                          T>>;

template <Prim P, class T> void unary_loop(std::int64_t n, const void* a_, std::int64_t sa, void* out_) {
  using R = unary_result_t<P, T>;
  const T* a = static_cast<const T*>(a_);
  R* out = static_cast<R*>(out_);
  for (std::int64_t i = 0; i < n; ++i)
    out[i] = convert_value<R>(Op<P>::scalar(convert_value<compute_t<T>>(a[i * sa])));
}

template <Prim P, class T> void binary_loop(std::int64_t n, const void* a_, std::int64_t sa,
                                            const void* b_, std::int64_t sb, void* out_) {
  using R = std::conditional_t<info(P).result == ResultDType::Bool, bool, T>;
  using CT = compute_t<T>;
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  R* out = static_cast<R*>(out_);
  auto element = [](T x) { return convert_value<CT>(x); };
  // (operands in a row, or the right one a single element: loops without
  // strides, which the compiler vectorizes; the same operations per element)
  if (sa == 1 && sb == 1) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = convert_value<R>(Op<P>::scalar(element(a[i]), element(b[i])));
  } else if (sa == 1 && sb == 0) {
    const CT y = element(*b);
    for (std::int64_t i = 0; i < n; ++i) out[i] = convert_value<R>(Op<P>::scalar(element(a[i]), y));
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = convert_value<R>(Op<P>::scalar(element(a[i * sa]), element(b[i * sb])));
  }
}

// ---- reductions: an identity and a combine per primitive
template <Prim P> struct Reducer;
template <> struct Reducer<Prim::reduce_sum> {
  template <class T> static T identity() { return T(0); }
  template <class T> static T combine(T a, T b) { return Op<Prim::add>::scalar(a, b); }
};
template <> struct Reducer<Prim::reduce_prod> {
  template <class T> static T identity() { return T(1); }
  template <class T> static T combine(T a, T b) { return Op<Prim::mul>::scalar(a, b); }
};
template <> struct Reducer<Prim::reduce_max> {
  template <class T> static T identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  template <class T> static T combine(T a, T b) { return Op<Prim::maximum>::scalar(a, b); }
};
template <> struct Reducer<Prim::reduce_min> {
  template <class T> static T identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  template <class T> static T combine(T a, T b) { return Op<Prim::minimum>::scalar(a, b); }
};
template <> struct Reducer<Prim::reduce_and> {
  template <class T> static bool identity() { return true; }
  template <class T> static bool combine(bool a, bool b) { return a && b; }
};
template <> struct Reducer<Prim::reduce_or> {
  template <class T> static bool identity() { return false; }
  template <class T> static bool combine(bool a, bool b) { return a || b; }
};

template <Prim P> inline constexpr bool is_logical_reduce = P == Prim::reduce_and || P == Prim::reduce_or;

// The whole row as one piece. (The pieces are never inlined: a fused
// reduction calls the same functions through the table, and two
// compilations of one loop may give different NaNs, the compiler being free
// to swap the operands of a + b.)
template <class Pieces> void reduce_whole(std::int64_t n, const void* in, void* out) {
  alignas(64) unsigned char state[reduce_state_bytes];
  Pieces::start(state);
  Pieces::add(n, in, state);
  Pieces::finish(state, out);
}

// The order of every reduction, whatever the instruction set (the SIMD
// loops in simd.hpp keep it too): element i of a row goes to accumulator
// i mod reduce_lanes<A>, each a fold from the identity in the row's order;
// then the accumulators are combined by halves (acc[k] with acc[k + L/2],
// then k + L/4, ..., acc[0] with acc[1]). L is 128 bytes of accumulators
// (32 float32, 16 float64), the four AVX2 registers of the fastest loop;
// SSE2 keeps them in eight registers, AVX-512 in two, the portable loop in
// an array.
template <class A> inline constexpr int reduce_lanes = sizeof(A) >= 16 ? 8 : sizeof(A) == 8 ? 16 : 32;

// The fixed-order accumulators of one reduction, in scalar code. 16-bit
// floats accumulate in float32 (compute_t); `finish` rounds once to the
// element type, `partial` gives the float32 accumulation (a long row's
// segments are combined from their partials, reduce_row.hpp).
template <Prim P, class T> struct ScalarReduce {
  using A = std::conditional_t<is_logical_reduce<P>, bool, compute_t<T>>;
  using R = std::conditional_t<is_logical_reduce<P>, bool, T>;
  static constexpr int L = reduce_lanes<A>;
  static_assert(L * sizeof(A) <= reduce_state_bytes && reduce_piece % L == 0);

  [[gnu::noinline]] static void start(void* state) {
    for (int k = 0; k < L; ++k) new (static_cast<A*>(state) + k) A(Reducer<P>::template identity<A>());
  }
  [[gnu::noinline]] static void add(std::int64_t n, const void* in_, void* state) {
    const T* in = static_cast<const T*>(in_);
    A acc[L];  // (a local copy: the input cannot alias it, so the loop vectorizes)
    std::copy_n(static_cast<const A*>(state), L, acc);
    std::int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int k = 0; k < L; ++k) acc[k] = Reducer<P>::template combine<A>(acc[k], convert_value<A>(in[i + k]));
    for (int k = 0; i < n; ++i, ++k) acc[k] = Reducer<P>::template combine<A>(acc[k], convert_value<A>(in[i]));
    std::copy_n(acc, L, static_cast<A*>(state));
  }
  static A combined(const void* state) {
    A acc[L];
    std::copy_n(static_cast<const A*>(state), L, acc);
    for (int w = L / 2; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] = Reducer<P>::template combine<A>(acc[k], acc[k + w]);
    return acc[0];
  }
  [[gnu::noinline]] static void finish(const void* state, void* out) {
    *static_cast<R*>(out) = convert_value<R>(combined(state));
  }
  [[gnu::noinline]] static void partial(const void* state, void* out) { *static_cast<A*>(out) = combined(state); }
};

// Rows of n <= L elements reduced in the order above, without the
// accumulators' round trip: each of the row's lanes is the identity
// combined with its element, the lanes past n hold the identity, and
// combining a lane with the identity leaves it as it is (a float lane of a
// sum is never -0 once 0 has been added to it; x * 1, max(x, -inf) and
// min(x, inf) are x, NaN included), so the halves combine only lanes below
// n. For float32 and float64 (an accumulator of the element's type).
template <Prim P, class T, std::int64_t N = 0>
void short_rows(std::int64_t rows, std::int64_t n, const void* in_, void* out_) {
  static_assert(std::is_floating_point_v<T> && !is_logical_reduce<P>);
  constexpr int L = reduce_lanes<T>;
  if constexpr (N == 0) {  // (rows of 2 to 4 elements: the same loop with n known, unrolled)
    switch (n) {
      case 2: return short_rows<P, T, 2>(rows, n, in_, out_);
      case 3: return short_rows<P, T, 3>(rows, n, in_, out_);
      case 4: return short_rows<P, T, 4>(rows, n, in_, out_);
      default: break;
    }
  }
  const std::int64_t length = N > 0 ? N : n;
  if constexpr (N == 2) {  // (the same two combines, in a loop the compiler vectorizes)
    const T* __restrict in = static_cast<const T*>(in_);
    T* __restrict out = static_cast<T*>(out_);
    using R = Reducer<P>;
    for (std::int64_t r = 0; r < rows; ++r)
      out[r] = R::template combine<T>(R::template combine<T>(R::template identity<T>(), in[2 * r]),
                                      R::template combine<T>(R::template identity<T>(), in[2 * r + 1]));
    return;
  }
  const T* in = static_cast<const T*>(in_);
  T* out = static_cast<T*>(out_);
  for (std::int64_t r = 0; r < rows; ++r, in += length) {
    T lane[L];
    for (std::int64_t k = 0; k < length; ++k)
      lane[k] = Reducer<P>::template combine<T>(Reducer<P>::template identity<T>(), in[k]);
    for (std::int64_t w = L / 2; w >= 1; w /= 2)
      for (std::int64_t k = 0; k < w && k + w < length; ++k)
        lane[k] = Reducer<P>::template combine<T>(lane[k], lane[k + w]);
    out[r] = lane[0];
  }
}

template <Prim P, class T> std::int32_t arg_loop(std::int64_t n, const void* in_, std::int64_t s) {
  const T* in = static_cast<const T*>(in_);
  using CT = compute_t<T>;
  CT best = convert_value<CT>(in[0]);
  std::int32_t at = 0;
  if (best != best) return 0;
  if constexpr (std::is_same_v<T, bool>) {  // (the first false of an argmin, true of an argmax: none comes first)
    for (std::int64_t i = 0; i < n; ++i)
      if (in[i * s] == (P == Prim::argmax)) return std::int32_t(i);
    return 0;
  }
  for (std::int64_t i = 1; i < n; ++i) {
    CT x = convert_value<CT>(in[i * s]);
    if (x != x) return std::int32_t(i);
    if (P == Prim::argmax ? x > best : x < best) best = x, at = std::int32_t(i);
  }
  return at;
}

}  // namespace nx::ops::kernels
