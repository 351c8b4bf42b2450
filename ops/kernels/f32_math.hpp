// float32 exp and tanh on an xsimd batch of floats: one reduction and one
// polynomial each, no tables, no branches, so that a fused kernel's chain of
// them stays compute-light (the scalar loops use the C library).
//
// Both reduce y = k ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2's head has
// few bits, so k times it is exact for the k that occur) and evaluate
// e^r - 1 = r + r^2 q(r), q a degree-4 polynomial fitted to (e^r - 1 - r)/r^2
// (Chebyshev fit, error 7e-8). Measured over every float of the range
// (docs/accuracy.md): exp within 1.08 ulps, tanh within 2.52.
//
// sin, cos and tan of a float compute in float64, with no table and nothing
// shared between lanes (trig_core), and round once; widened runs such a
// float64 function on a batch of floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include "ops/kernels/xsimd.hpp"

#include "ops/kernels/f32_constants.hpp"
#include "ops/kernels/f64_math.hpp"

namespace nx::ops::kernels::f32 {

// Whether B is an AVX-512 batch, whose instructions the functions below use
// where xsimd 8 has none (its avx512f `fma` is a multiply and an add).
template <class B> inline constexpr bool avx512 = std::is_same_v<typename B::arch_type, xsimd::avx512f>;

// a * b + c, fused where the instruction set has it.
template <class B> B fma(B a, B b, B c) {
#if defined(__AVX512F__)
  if constexpr (avx512<B>) return B(_mm512_fmadd_ps(a, b, c));
#endif
  return xsimd::fma(a, b, c);
}
// c - a * b, the same way.
template <class B> B fnma(B a, B b, B c) {
#if defined(__AVX512F__)
  if constexpr (avx512<B>) return B(_mm512_fnmadd_ps(a, b, c));
#endif
  return xsimd::fnma(a, b, c);
}

// (e^r - 1 - r) / r^2 for |r| <= ln2/2.
template <class B> [[gnu::always_inline]] inline B expm1_tail(B r) {
  const auto& c = expm1_tail_coefficients;
  B p = f32::fma(r, B(c[0]), B(c[1]));
  p = f32::fma(p, r, B(c[2]));
  p = f32::fma(p, r, B(c[3]));
  return f32::fma(p, r, B(c[4]));
}

// e^y = 2^k (1 + m): k in each lane of `k`, m returned.
template <class B> [[gnu::always_inline]] inline B reduce_exp(B y, B& k) {
  k = xsimd::nearbyint(y * B(log2e));  // y / ln2
  B r = f32::fnma(k, B(ln2_head), y);
  r = f32::fnma(k, B(ln2_tail), r);
  return f32::fma(r * r, expm1_tail(r), r);
}

// v * 2^k for whole k in [-126, 127]: one rounding of the product (AVX-512
// scales in one instruction, the others multiply by 2^k made of its bits).
template <class B> [[gnu::always_inline]] inline B scaled(B v, B k) {
#if defined(__AVX512F__)
  if constexpr (avx512<B>) return B(_mm512_scalef_ps(v, k));
#endif
  using I = xsimd::batch<std::int32_t, typename B::arch_type>;
  return v * xsimd::bitwise_cast<B>((xsimd::to_int(k) + I(127)) << 23);
}

// e^x where the result is normal: x in [-87.3, 87.3] (the caller sends the
// other lanes to the C library).
template <class B> [[gnu::always_inline]] inline B exp_core(B x) {
  B k;
  const B m = reduce_exp(x, k);
  return scaled(m + B(1.f), k);
}

// tanh |x| = e / (e + 2) with e = e^(2|x|) - 1, exact near 0 (no
// cancellation); the sign copied back. Beyond 2|x| = 20 the result is 1 to
// float precision, so the argument is clamped there (NaN goes through:
// min gives its second operand where one is NaN).
template <class B> [[gnu::always_inline]] inline B tanh_core(B x) {
  const B y = xsimd::min(B(tanh_clamp), xsimd::abs(x) * B(2.f));
  B k;
  const B m = reduce_exp(y, k);
  const B scale = scaled(B(1.f), k);
  const B e = f32::fma(scale, m, scale - B(1.f));
  return xsimd::bitwise_or(e / (e + B(2.f)), xsimd::bitwise_and(x, B(-0.f)));
}

enum class Trig { sin, cos, tan };

// sin, cos or tan of x, a float's value as a double (or a batch of them),
// |x| <= 1e4, to far more than float precision. x = n pi/2 + r, |r| <= pi/4,
// with pi/2 in three parts of 40 bits (n below 2^13: each product exact, r
// within 2^-70 of the true reduced argument); sin r and cos r by their
// Taylor polynomials to r^11 and r^12 (relative errors below 1e-11); the
// quadrant picks +-sin r or +-cos r (tan: their quotient).
template <Trig F, class V> V trig_core(V x) {
  using L = f64::lanes<V>;
  using U = typename L::U;
  const V zs = x * V(f64::two_over_pi) + V(f64::shift);
  const V n = zs - V(f64::shift);
  const U quad = L::bits(zs) + U(F == Trig::cos ? 1 : 0);
  const V r = ((x - n * V(f64::pio2_1)) - n * V(f64::pio2_2)) - n * V(f64::pio2_3);
  const V r2 = r * r;
  const V sin_r = r + r * r2 * (V(-1. / 6) + r2 * (V(1. / 120) + r2 * (V(-1. / 5040) + r2 * (V(1. / 362880) +
                                                                                        r2 * V(-1. / 39916800)))));
  const V cos_r = V(1) + r2 * (V(-0.5) + r2 * (V(1. / 24) + r2 * (V(-1. / 720) + r2 * (V(1. / 40320) +
                                                                      r2 * (V(-1. / 3628800) + r2 * V(1. / 479001600))))));
  const U odd = U(0) - (quad & U(1));  // all ones in odd quadrants
  auto pick = [&](V if_odd, V if_even) { return L::from_bits((L::bits(if_odd) & odd) | (L::bits(if_even) & ~odd)); };
  const V result = F == Trig::tan ? pick(-cos_r, sin_r) / pick(sin_r, cos_r)
                                  : L::from_bits(L::bits(pick(cos_r, sin_r)) ^ ((quad & U(2)) << 62));  // negative in quadrants 2, 3
  if constexpr (F == Trig::cos) return result;
  return L::select(x == V(0), x, result);  // sin(-0) = tan(-0) = -0
}

// f(x) computed in float64 and rounded once to float: a batch of floats as
// two batches of doubles of the same instruction set.
template <class B, class F> [[gnu::always_inline]] inline B widened(B x, F f) {
  using D = xsimd::batch<double, typename B::arch_type>;
  static_assert(B::size == 2 * D::size);
  alignas(64) float narrow[B::size];
  alignas(64) double wide[B::size];
  x.store_aligned(narrow);
  for (std::size_t k = 0; k < B::size; ++k) wide[k] = narrow[k];
  for (std::size_t k = 0; k < B::size; k += D::size) f(D::load_aligned(wide + k)).store_aligned(wide + k);
  for (std::size_t k = 0; k < B::size; ++k) narrow[k] = float(wide[k]);
  return B::load_aligned(narrow);
}

}  // namespace nx::ops::kernels::f32
