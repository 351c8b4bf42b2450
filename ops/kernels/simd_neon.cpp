// The SIMD loops for NEON on 64-bit ARM (every aarch64 processor has it).
#include "ops/kernels/simd.hpp"

namespace nx::ops::kernels {
void fill_neon(Table& t) { simd::fill<xsimd::neon64>(t, "neon64"); }
}  // namespace nx::ops::kernels
