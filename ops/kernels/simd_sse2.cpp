// The SIMD loops for SSE2 (every x86-64 processor).
#include "ops/kernels/simd.hpp"

namespace nx::ops::kernels {
void fill_sse2(Table& t) { simd::fill<xsimd::sse2>(t, "sse2"); }
}  // namespace nx::ops::kernels
