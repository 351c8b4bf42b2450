// One trip emitted for x86-64 (System V) with asmjit's x86::Assembler: the
// plan of trip.hpp written as SSE2 code.
//
// Inline: float32/float64 + - * / and negation (a sign flip), sqrt and
// abs, comparisons, selects and conversions between the two, as the VM
// computes them (SSE2 scalar instructions, never an FMA: its bits); + - *
// and comparisons of 32- and 64-bit integers and and/or/xor of booleans (a
// loop's counter). Every other scalar instruction calls the row loop the
// VM calls (`Instruction::row`, one element), its operands at home.
// xmm0 .. xmm14 hold values; xmm15 and rax, rdx are the emitter's scratch.
#pragma once

#include <asmjit/x86.h>

#include "vm/native/trip.hpp"

namespace rune::vm::native {

// A value's frame slot, as wide as its value (frames.hpp), and its address
// (a call-out's argument).
asmjit::x86::Mem home(const Frames& frames, std::int32_t key);
asmjit::x86::Mem slot(const Frames& frames, std::int32_t key);

// movsd (doubles) or movss between an xmm register and memory or another
// register.
void move_scalar(asmjit::x86::Assembler& as, const asmjit::Operand_& to, const asmjit::Operand_& from, bool doubles);
// Moves a value of `key` (its width: a scalar of its type, or a packed
// row) between an xmm register and memory or another register.
void move_value(asmjit::x86::Assembler& as, const Frames& frames, std::int32_t key, const asmjit::Operand_& to,
                const asmjit::Operand_& from);

// A general register of `size` bytes (1, 2, 4, 8) of the given id.
asmjit::x86::Gp gp(std::uint32_t id, std::size_t size);

class X86Trip : public Trip {
 public:
  static constexpr int registers = 15, pinned_most = 12;
  X86Trip(asmjit::x86::Assembler& as, const Frames& frames, std::vector<Event> events, bool comments)
      : Trip(frames, std::move(events), registers, pinned_most, comments), as_(as) {}

  // Copies an element of `size` bytes from memory to memory through rax.
  void copy(const asmjit::x86::Mem& to, const asmjit::x86::Mem& from, std::size_t size);
  asmjit::x86::Mem home(std::int32_t key) const { return native::home(frames_, key); }

 private:
  void fill(int reg, std::int32_t key) override;
  void spill(std::int32_t key, int reg) override;
  void move(const Move& m) override;
  void copy_home(std::int32_t to, std::int32_t from) override { copy(home(to), home(from), frames_.size_of(to)); }
  void arithmetic(std::size_t e, const Instruction& in) override;
  bool inline_call(std::size_t e, const Instruction& in) override;
  bool inline_integers(std::size_t e, const Instruction& in);
  void call_out(std::size_t e, const Instruction& in) override;
  void comment(const std::string& line) override { as_.comment(line.c_str()); }
  bool lanes(std::size_t e, const Instruction& in);
  void flip_sign(const asmjit::x86::Xmm& d, bool doubles, bool packed);
  asmjit::x86::Xmm lane_mask(std::uint64_t mask64, std::uint32_t mask32, bool doubles, bool packed);

  asmjit::x86::Assembler& as_;
};

}  // namespace rune::vm::native
