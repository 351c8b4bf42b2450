// One trip of a promoted loop, planned: the instructions of the unit's
// codes in order, and the points where the loop itself reads values (the
// boundary between an iterate's until and step, the end of a trip), with
// the next read of every value known beforehand, so values stay in vector
// registers while they are read again (register_cache.hpp). What every
// machine shares lives here: the plan, the carry pinned in registers, the
// parallel move's order. Each machine's emitter (x86/trip.hpp,
// a64/trip.hpp) writes the instructions and the single moves; the loop's
// skeleton (loops.hpp and each machine's scan and iterate loops) says
// where each event goes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vm/native/frames.hpp"
#include "vm/native/register_cache.hpp"

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

// An instruction as listings show it; a move between a scalar and a row
// (lanes) as what it does.
std::string event_text(const Frames& frames, const Event& event);

// Whether a binary primitive is a comparison (its result a boolean), and
// whether a type is a 32- or 64-bit integer (whose + - * and comparisons
// the emitters write inline).
bool is_comparison(nx::ops::Prim p);
bool is_word(nx::DType t);

// A value's place when the loop moves it: a vector register, its home, or
// the scratch register of a parallel move (a vector register for floats, a
// general register for other types).
struct Place {
  enum Kind : std::uint8_t { vector, home, scratch } kind;
  std::int32_t index;  // vector: the register; home: the key
  bool operator==(const Place&) const = default;
};

class Trip : protected RegisterCache::Homes {
 public:
  // (registers: the vector registers the cache holds values in; pinned_most:
  // the most of them a carry keeps across trips; comments: each instruction
  // written as a comment above its code, for listings)
  Trip(const Frames& frames, std::vector<Event> events, int registers, int pinned_most, bool comments);
  virtual ~Trip() = default;

  RegisterCache& cache() { return cache_; }
  const Frames& frames() const { return frames_; }
  const Event& event(std::size_t e) const { return events_[e]; }
  std::size_t size() const { return events_.size(); }
  // The position of the next read of event e's k-th read after it, of the
  // value its w-th write writes, and of a value's first read in a trip
  // (never: none).
  std::int32_t after(std::size_t e, std::size_t k) const { return after_[e][k]; }
  std::int32_t written(std::size_t e, std::size_t w) const { return written_[e][w]; }
  std::int32_t first(std::int32_t key) const { return first_[std::size_t(key)]; }

  // Emits event e, an instruction: inline (the opcode table's `emit`, or a
  // `call` the machine has an instruction for) or calling its row loop.
  void instruction(std::size_t e);

  // The carry kept in vector registers across trips: (register, parameter).
  using Pinned = std::vector<std::pair<int, std::int32_t>>;
  // The float parameters among `params` that a trip reads (or passes on),
  // each given a register of its own, at most pinned_most of them.
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
  // The value of `from` becomes `to`'s, read next at `next` (never: `from`
  // dies, nothing moves): a float keeps its register (or is loaded into
  // one); another type is copied at home.
  void pass(std::int32_t from, std::int32_t to, std::int32_t next);
  // Writes home those of `keys` cached in registers, the cache unchanged
  // (a way out of the loop, the trip's state kept for the way on).
  void store_cached(const std::vector<std::int32_t>& keys);
  // Whether an instruction emitted so far calls out (every register but
  // the callee-saved ones changes there).
  bool called_out() const { return called_out_; }

 protected:
  // Each machine's code: an instruction the table emits, one it would call
  // out for emitted inline where the machine can (false: it cannot), the
  // call out, and a comment line of a listing.
  virtual void arithmetic(std::size_t e, const Instruction& in) = 0;
  virtual bool inline_call(std::size_t e, const Instruction& in) = 0;
  virtual void call_out(std::size_t e, const Instruction& in) = 0;
  virtual void comment(const std::string& line) = 0;
  // One move of a parallel move.
  virtual void move(const Move& m) = 0;
  // Copies a value that is not a float from one home to another.
  virtual void copy_home(std::int32_t to, std::int32_t from) = 0;
  // A call out is emitted: every cached value goes home.
  void calling_out(std::size_t e);
  std::int32_t key(std::size_t e, std::int32_t reg) const { return frames_.key(events_[e].space, reg); }

  const Frames& frames_;
  std::vector<Event> events_;
  std::vector<std::vector<std::int32_t>> after_, written_;
  std::vector<std::int32_t> first_;
  RegisterCache cache_;
  int pinned_most_;
  bool comments_;
  bool called_out_ = false;
};

}  // namespace rune::vm::native
