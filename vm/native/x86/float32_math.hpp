// float32 exp and tanh of a vector register in machine code, the operations
// of the row loops' batch code (ops/kernels/f32_math.hpp) one for one at the
// process's SIMD level, so that every lane has the VM's bits.
#pragma once

#include <span>

#include <asmjit/x86.h>

#include "vm/native/x86/vectors.hpp"

namespace rune::vm::native {

// The scratch registers each takes (besides its argument and result).
inline constexpr int exp_scratch = 4, tanh_scratch = 6;

// out = e^x, or a jump to `outside` (before anything is written) where a
// lane of x is outside [exp_lowest, exp_highest] or NaN: the row loop
// computes those lanes by the C library. out may be x's register.
void emit_exp(Float32Ops& ops, ConstantPool& pool, const asmjit::x86::Vec& out, const asmjit::x86::Vec& x,
              std::span<const asmjit::x86::Vec, exp_scratch> scratch, const asmjit::Label& outside);
// out = tanh x, for every x. out may be x's register.
void emit_tanh(Float32Ops& ops, ConstantPool& pool, const asmjit::x86::Vec& out, const asmjit::x86::Vec& x,
               std::span<const asmjit::x86::Vec, tanh_scratch> scratch);

}  // namespace rune::vm::native
