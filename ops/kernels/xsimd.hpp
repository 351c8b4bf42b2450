// xsimd, as every kernel includes it: with 64-bit ARM's float32 division
// and square root as the instructions, correctly rounded as IEEE 754 (and
// C, and the other instruction sets) have them. xsimd 8 (Debian 12) has no
// neon64 overloads for float32 `div` and `sqrt`, so those batches take
// ARMv7's: a reciprocal estimate refined by Newton steps, which misses the
// correctly rounded result on ~40% of elements and gives sqrt(-0) = +0
// (found by the test suite run under qemu-aarch64: docs/platforms.md).
//
// xsimd's batch operators and functions call kernel::div and kernel::sqrt
// by qualified name, so only the overloads declared before xsimd's own
// definitions take part: they are declared first and defined after. Every
// file must include xsimd through this header (one overload set in every
// translation unit).
#pragma once

#include <cstddef>

#if defined(__aarch64__)
#include <xsimd/config/xsimd_config.hpp>
#include <xsimd/config/xsimd_arch.hpp>
#include <xsimd/types/xsimd_utils.hpp>

namespace xsimd::kernel {
template <class A>
batch<float, A> div(batch<float, A> const& a, batch<float, A> const& b, requires_arch<neon64>) noexcept;
template <class A> batch<float, A> sqrt(batch<float, A> const& x, requires_arch<neon64>) noexcept;
}  // namespace xsimd::kernel
#endif

#include <xsimd/xsimd.hpp>

#if defined(__aarch64__)
namespace xsimd::kernel {
template <class A>
batch<float, A> div(batch<float, A> const& a, batch<float, A> const& b, requires_arch<neon64>) noexcept {
  return vdivq_f32(a, b);
}
template <class A> batch<float, A> sqrt(batch<float, A> const& x, requires_arch<neon64>) noexcept {
  return vsqrtq_f32(x);
}
}  // namespace xsimd::kernel
#endif
