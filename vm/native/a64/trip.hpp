// One trip emitted for 64-bit ARM (AArch64, AAPCS64) with asmjit's
// a64::Assembler: the plan of trip.hpp written as scalar FP code, and
// packed rows of a fused kernel (two float64 or four float32 in a q
// register: + - * /, negation, sqrt, abs on their lanes).
//
// Inline: float32/float64 + - * / and negation, sqrt and abs, comparisons
// (fcmp, cset), selects (fcsel) and conversions between the two (fcvt), as
// the VM computes them (never a fused multiply-add: its bits); + - * and
// comparisons of 32- and 64-bit integers and and/or/xor of booleans. Every
// other scalar instruction calls the row loop the VM calls
// (`Instruction::row`, one element), its operands at home.
//
// v0 .. v30 hold values, v31 is the scratch of a parallel move; x9, x10
// and x16 are the emitter's scratch general registers. The loops keep
// their own state in x19 .. x22 and save d8 .. d15, which the cache uses.
#pragma once

#include <asmjit/arm/a64assembler.h>  // (Debian's asmjit ships no asmjit/a64.h)

#include "vm/native/trip.hpp"

namespace rune::vm::native {

// A value's frame slot, and its address into `to` (a call-out's argument).
asmjit::a64::Mem home(const Frames& frames, std::int32_t key);
void address(asmjit::a64::Assembler& as, const asmjit::a64::Gp& to, const Frames& frames, std::int32_t key);

// The general register of `id` as wide as a value of `size` bytes (w for
// 1, 2, 4; x for 8), and a load or store of that many bytes through it.
asmjit::a64::Gp gp(std::uint32_t id, std::size_t size);
void load_bytes(asmjit::a64::Assembler& as, const asmjit::a64::Gp& to, const asmjit::a64::Mem& from, std::size_t size);
void store_bytes(asmjit::a64::Assembler& as, const asmjit::a64::Mem& to, const asmjit::a64::Gp& from, std::size_t size);
// A vector register as a double (d) or a float (s), or as a packed row of
// them (2d, 4s).
asmjit::a64::Vec fp(int reg, bool doubles);
asmjit::a64::Vec lanes_of(int reg, bool doubles);

// `to` = bits (a movz, and a movk for each other nonzero 16 bits), and a
// call of `target` through x16 (which listings show as a movz of
// `<row loop>`: runtime.hpp's readable).
void move_immediate(asmjit::a64::Assembler& as, const asmjit::a64::Gp& to, std::uint64_t bits);
void call(asmjit::a64::Assembler& as, const void* target);

// A loop's frame on the machine stack: the frame record, x19 .. x22 and
// d8 .. d15 saved (enter) and restored before the return (leave).
void enter(asmjit::a64::Assembler& as);
void leave(asmjit::a64::Assembler& as);

class A64Trip : public Trip {
 public:
  static constexpr int registers = 31, pinned_most = 24;
  A64Trip(asmjit::a64::Assembler& as, const Frames& frames, std::vector<Event> events, bool comments)
      : Trip(frames, std::move(events), registers, pinned_most, comments), as_(as) {}

  // Copies an element of `size` bytes from memory to memory through x9.
  void copy(const asmjit::a64::Mem& to, const asmjit::a64::Mem& from, std::size_t size);
  asmjit::a64::Mem home(std::int32_t key) const { return native::home(frames_, key); }
  // A value's register as wide as the value: a scalar (d, s) or a packed row (q).
  asmjit::a64::Vec whole(int reg, std::int32_t key) const;

 private:
  void fill(int reg, std::int32_t key) override;
  void spill(std::int32_t key, int reg) override;
  void move(const Move& m) override;
  void copy_home(std::int32_t to, std::int32_t from) override { copy(home(to), home(from), frames_.size_of(to)); }
  int result(std::size_t e, std::size_t first, std::size_t count);
  void arithmetic(std::size_t e, const Instruction& in) override;
  bool inline_call(std::size_t e, const Instruction& in) override;
  bool inline_integers(std::size_t e, const Instruction& in);
  bool compare(std::size_t e, const Instruction& in);
  bool unary(std::size_t e, const Instruction& in);
  bool select(std::size_t e, const Instruction& in);
  bool convert(std::size_t e, const Instruction& in);
  bool lanes(std::size_t e, const Instruction& in);
  asmjit::a64::Mem whole_home(std::int32_t key);
  void call_out(std::size_t e, const Instruction& in) override;
  void comment(const std::string& line) override { as_.comment(line.c_str()); }
  // A boolean at home as 0 or 1 in w (any nonzero byte is true, as the row
  // loops read it).
  void truth(const asmjit::a64::Gp& w, std::int32_t key);

  asmjit::a64::Assembler& as_;
};

}  // namespace rune::vm::native
