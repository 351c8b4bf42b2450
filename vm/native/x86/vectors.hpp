// The vector registers of the process's SIMD level on x86-64 (xmm for SSE2,
// ymm for AVX2, zmm for AVX-512: the level whose row loops the VM calls),
// constants placed after a loop's code, and float32 arithmetic on whole
// registers in one three-operand form for every level.
#pragma once

#include <cstdint>
#include <vector>

#include <asmjit/x86.h>

namespace rune::vm::native {

enum class Width : std::uint8_t { sse, avx, avx512 };

// The level of the row loops the VM calls (nx::ops::kernels::table()).
Width simd_width();
int vector_bytes(Width w);
// Vector register `reg` at width w (its xmm for scalar forms).
asmjit::x86::Vec vector_register(Width w, int reg, bool scalar = false);

// Vectors of one 32-bit pattern in every lane, placed after the code
// (`place`) and read relative to the instruction pointer.
class ConstantPool {
 public:
  ConstantPool(asmjit::x86::Assembler& as, Width w) : as_(as), bytes_(vector_bytes(w)) {}
  asmjit::x86::Mem bits(std::uint32_t pattern);
  asmjit::x86::Mem number(float value);
  void place();

 private:
  asmjit::x86::Assembler& as_;
  int bytes_;
  asmjit::Label label_;  // (made with the first constant: code without any keeps its labels' numbers)
  std::vector<std::uint32_t> patterns_;
};

// float32 arithmetic on whole vector registers: d = a op b, where b (and
// c) may be a register or memory. VEX and EVEX take the form as it is;
// SSE's two-operand instructions move a to d first, so d must then not be
// b (nor c). A multiply-add is fused where the level has FMA (AVX2,
// AVX-512) and a multiply and an add on SSE2, as xsimd's fma is.
class Float32Ops {
 public:
  using Vec = asmjit::x86::Vec;
  using Operand = asmjit::Operand;
  Float32Ops(asmjit::x86::Assembler& as, ConstantPool& pool, Width w) : as_(as), pool_(pool), width_(w) {}

  void move(const Vec& d, const Operand& a);
  void add(const Vec& d, const Vec& a, const Operand& b);
  void sub(const Vec& d, const Vec& a, const Operand& b);
  void mul(const Vec& d, const Vec& a, const Operand& b);
  void div(const Vec& d, const Vec& a, const Operand& b);
  void min(const Vec& d, const Vec& a, const Operand& b);  // a < b ? a : b (b where either is NaN)
  void and_(const Vec& d, const Vec& a, const Operand& b);
  void or_(const Vec& d, const Vec& a, const Operand& b);
  void xor_(const Vec& d, const Vec& a, const Operand& b);
  void fma(const Vec& d, const Vec& a, const Operand& b, const Operand& c);   // a * b + c
  void fnma(const Vec& d, const Vec& a, const Operand& b, const Operand& c);  // c - a * b
  // To the nearest whole number, ties to even (SSE2: xsimd's sequence,
  // through three scratch registers).
  void round(const Vec& d, const Vec& a, const Vec (&scratch)[3]);
  // v * 2^k, k whole in [-126, 127]: AVX-512's vscalefps; elsewhere v times
  // the float 2^k made of its bits, as f32_math.hpp's `scaled` (d may not
  // be v or k).
  void scaled(const Vec& d, const Operand& v, const Vec& k);
  // A jump to `outside` unless every lane of x is in [lo, hi] (NaN is not).
  void unless_within(const Vec& x, float lo, float hi, const Vec (&scratch)[2], const asmjit::Label& outside);

 private:
  bool vex() const { return width_ != Width::sse; }
  void binary(std::uint32_t sse, std::uint32_t vex, const Vec& d, const Vec& a, const Operand& b);

  asmjit::x86::Assembler& as_;
  ConstantPool& pool_;
  Width width_;
};

}  // namespace rune::vm::native
