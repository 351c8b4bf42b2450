// float32 exp and tanh on an xsimd batch of floats: one reduction and one
// polynomial each, no tables, no branches, so that a map kernel's chain of
// them stays compute-light (the scalar loops use the C library).
//
// Both reduce y = k ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2's head has
// few bits, so k times it is exact for the k that occur) and evaluate
// e^r - 1 = r + r^2 q(r), q a degree-4 polynomial fitted to (e^r - 1 - r)/r^2
// (Chebyshev fit, error 7e-8). Measured over every float of the range
// (docs/accuracy.md): exp within 1.08 ulps, tanh within 2.52.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <xsimd/xsimd.hpp>

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
  B p = f32::fma(r, B(0.00139261759f), B(0.00836317334f));
  p = f32::fma(p, r, B(0.0416665561f));
  p = f32::fma(p, r, B(0.166665778f));
  return f32::fma(p, r, B(0.5f));
}

// e^y = 2^k (1 + m): k in each lane of `k`, m returned.
template <class B> [[gnu::always_inline]] inline B reduce_exp(B y, B& k) {
  k = xsimd::nearbyint(y * B(1.44269504f));  // y / ln2
  B r = f32::fnma(k, B(0.693359375f), y);  // ln2's head: 9 significant bits
  r = f32::fnma(k, B(-2.12194440e-4f), r);  // and its tail
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
  const B y = xsimd::min(B(20.f), xsimd::abs(x) * B(2.f));
  B k;
  const B m = reduce_exp(y, k);
  const B scale = scaled(B(1.f), k);
  const B e = f32::fma(scale, m, scale - B(1.f));
  return xsimd::bitwise_or(e / (e + B(2.f)), xsimd::bitwise_and(x, B(-0.f)));
}

}  // namespace nx::ops::kernels::f32
