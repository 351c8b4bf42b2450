// The SIMD loops for AVX-512 (F); built with -mavx512f (ops/meson.build).
#include "ops/kernels/simd.hpp"

namespace nx::ops::kernels {
void fill_avx512(Table& t) { simd::fill<xsimd::avx512f>(t, "avx512"); }
}  // namespace nx::ops::kernels
