// The SIMD loops for AVX2 with FMA; built with -mavx2 -mfma (ops/meson.build).
#include "ops/kernels/simd.hpp"

namespace nx::ops::kernels {
void fill_avx2(Table& t) { simd::fill<xsimd::fma3<xsimd::avx2>>(t, "avx2"); }
}  // namespace nx::ops::kernels
