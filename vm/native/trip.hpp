// One trip of a promoted loop, emitted: the instructions of the unit's
// codes in order, and the points where the loop itself reads values (the
// boundary between an iterate's until and step, the end of a trip), with
// the next read of every value known beforehand, so values stay in xmm
// registers while they are read again (xmm_cache.hpp). The loop's skeleton
// (scan_loop.cpp, iterate_loop.cpp) says where each event goes.
//
// Inline: float32/float64 + - * / and negation (a sign flip), sqrt and
// abs, comparisons, selects and conversions between the two, as the VM computes them (SSE2
// scalar instructions, never an FMA: its bits); + - * and comparisons of
// 32- and 64-bit integers and and/or/xor of booleans (a loop's counter).
// Every other scalar instruction calls the row loop the VM calls
// (`Instruction::row`, one element), its operands at home.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <asmjit/x86.h>

#include "vm/native/frames.hpp"
#include "vm/native/xmm_cache.hpp"

namespace rune::vm::native {

struct Event {
  // An instruction of the code of `space`, or (null) a point where the loop
  // reads `reads` and writes `writes`.
  const Instruction* in = nullptr;
  int space = -1;
  std::vector<std::int32_t> reads, writes;  // keys (Frames)
};

// Why the tier leaves a unit's code on the VM, or null: it holds tensors,
// runs an instruction the opcode table keeps on the VM, or writes a
// register every trip reads as the loop left it (a constant, or one of the
// `invariant` parameters); `culprit`: the instruction at fault. It
// allocates nothing (a steady state of calls of a refused unit stays free
// of allocations).
const char* code_refusal(const Code& code, std::span<const Location> invariant, const Instruction*& culprit);

// The instructions of a code as events.
void add_instructions(const Frames& frames, int space, std::vector<Event>& events);

// A value's place when the loop moves it: an xmm register, its home, or
// the scratch register of a parallel move (xmm15, or rdx for other types).
struct Place {
  enum Kind : std::uint8_t { xmm, home, scratch } kind;
  std::int32_t index;  // xmm: the register; home: the key
  bool operator==(const Place&) const = default;
};

class Trip {
 public:
  Trip(asmjit::x86::Assembler& as, const Frames& frames, std::vector<Event> events, bool comments);

  XmmCache& cache() { return cache_; }
  const Frames& frames() const { return frames_; }
  const Event& event(std::size_t e) const { return events_[e]; }
  std::size_t size() const { return events_.size(); }
  // The position of the next read of event e's k-th read after it, of the
  // value its w-th write writes, and of a value's first read in a trip
  // (never: none).
  std::int32_t after(std::size_t e, std::size_t k) const { return after_[e][k]; }
  std::int32_t written(std::size_t e, std::size_t w) const { return written_[e][w]; }
  std::int32_t first(std::int32_t key) const { return first_[std::size_t(key)]; }

  // Emits event e, an instruction.
  void instruction(std::size_t e);

  // The carry kept in xmm registers across trips: (register, parameter).
  using Pinned = std::vector<std::pair<int, std::int32_t>>;
  // The float parameters among `params` that a trip reads (or passes on),
  // each given an xmm register of its own, at most pinned_most of them.
  static constexpr int pinned_most = 12;
  Pinned pin(const std::vector<std::int32_t>& params) const;
  // Loads the pinned values from home (before the loop); stores them home
  // (after it, or on a way out of it: the cache's state stays the trip's).
  void load(const Pinned& pinned);
  void store(const Pinned& pinned);
  // The top of a trip: nothing cached but the pinned values.
  void start(const Pinned& pinned);
  // The carry from each result to its parameter (pairs of keys), all at
  // once: into a pinned parameter's register, or home.
  void move_carry(const std::vector<std::pair<std::int32_t, std::int32_t>>& carry, const Pinned& pinned);
  // Where a value is now.
  Place place(std::int32_t key) const;
  // Moves values all at once (a target may be another move's source): the
  // types are the targets'.
  struct Move {
    Place from, to;
    std::int32_t key;  // the target's value (its type)
  };
  void move_all(std::vector<Move> moves);
  // Whether an instruction emitted so far calls out (every register but
  // the callee-saved ones changes there).
  bool called_out() const { return called_out_; }
  // Copies an element of `size` bytes from memory to memory through rax.
  void copy(const asmjit::x86::Mem& to, const asmjit::x86::Mem& from, std::size_t size);

 private:
  void arithmetic(std::size_t e, const Instruction& in);
  bool inline_call(std::size_t e, const Instruction& in);
  bool inline_integers(std::size_t e, const Instruction& in);
  void call_out(std::size_t e, const Instruction& in);
  void move(const Move& m);
  bool lanes(std::size_t e, const Instruction& in);
  std::string text(std::size_t e, const Instruction& in) const;
  void flip_sign(const asmjit::x86::Xmm& d, bool doubles, bool packed);
  asmjit::x86::Xmm lane_mask(std::uint64_t mask64, std::uint32_t mask32, bool doubles, bool packed);
  std::int32_t key(std::size_t e, std::int32_t reg) const { return frames_.key(events_[e].space, reg); }

  asmjit::x86::Assembler& as_;
  const Frames& frames_;
  std::vector<Event> events_;
  bool comments_;
  std::vector<std::vector<std::int32_t>> after_, written_;
  std::vector<std::int32_t> first_;
  XmmCache cache_;
  bool called_out_ = false;
};

// A general register of `size` bytes (1, 2, 4, 8) of the given id.
asmjit::x86::Gp gp(std::uint32_t id, std::size_t size);

}  // namespace rune::vm::native
