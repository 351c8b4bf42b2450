// The constants of float32 exp and tanh on batches (f32_math.hpp), named
// once for the batch code and for the machine-code tier, which emits the
// same operations on vector registers (vm/native/x86/float32_math.cpp).
#pragma once

namespace nx::ops::kernels::f32 {

inline constexpr float log2e = 1.44269504f;
// ln2 in two parts: its head has 9 significant bits, so k times it is exact
// for the k that occur.
inline constexpr float ln2_head = 0.693359375f, ln2_tail = -2.12194440e-4f;
// (e^r - 1 - r) / r^2 for |r| <= ln2/2: a degree-4 polynomial, its
// coefficients highest degree first.
inline constexpr float expm1_tail_coefficients[] = {0.00139261759f, 0.00836317334f, 0.0416665561f, 0.166665778f,
                                                     0.5f};
// Where float32 exp's results are normal, [-126 ln2, 126 ln2]: the batch
// code computes there, the C library elsewhere (and for NaN).
inline constexpr float exp_lowest = float(-126 * 0.6931471805599453), exp_highest = float(126 * 0.6931471805599453);
// tanh's argument 2|x| clamped here: beyond, tanh is 1 to float precision.
inline constexpr float tanh_clamp = 20.f;

}  // namespace nx::ops::kernels::f32
