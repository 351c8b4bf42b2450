// float32 exp and tanh of a q register (four lanes) in NEON code, the
// operations of the NEON row loops' batch code (ops/kernels/f32_math.hpp as
// xsimd compiles it for neon64: fused fma, fnma as -a * b + c, nearbyint by
// adding and subtracting 2^23) one for one, so that every lane has the
// VM's bits. Constants are loaded, just before their use, from a pool
// placed after the loop's code.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <asmjit/arm/a64assembler.h>  // (Debian's asmjit ships no asmjit/a64.h)

namespace rune::vm::native {

// Vectors of one 32-bit pattern in four lanes, after the code (`place`).
class ConstantPool {
 public:
  explicit ConstantPool(asmjit::a64::Assembler& as) : as_(as) {}
  // q register `reg` = the pattern in every lane.
  void load(int reg, std::uint32_t pattern);
  void load(int reg, float value);
  void place();

 private:
  asmjit::a64::Assembler& as_;
  asmjit::Label label_;  // (made with the first constant)
  std::vector<std::uint32_t> patterns_;
};

// The vector registers each takes besides its argument and result.
inline constexpr int exp_scratch = 5, tanh_scratch = 7;

// out = e^x, or a branch to `outside` (before anything is written) where a
// lane of x is outside [exp_lowest, exp_highest] or NaN: the row loop
// computes those lanes by the C library. out may be x. (x16: a scratch.)
void emit_exp(asmjit::a64::Assembler& as, ConstantPool& pool, int out, int x, std::span<const int, exp_scratch> t,
              const asmjit::Label& outside);
// out = tanh x, for every x. out may be x.
void emit_tanh(asmjit::a64::Assembler& as, ConstantPool& pool, int out, int x, std::span<const int, tanh_scratch> t);

}  // namespace rune::vm::native
