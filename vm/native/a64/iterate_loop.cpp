// An iterate's loop in machine code (AArch64, AAPCS64): until's
// instructions, the stop tested, the step's instructions (trip.hpp), the
// carry moved back, in turn; the float carry held in vector registers
// across trips, until's carry parameters and the step's the same registers.

#include "vm/native/a64/trip.hpp"
#include "vm/native/loops.hpp"
#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"

namespace rune::vm::native {

namespace {

namespace a64 = asmjit::a64;

// General registers: until's frame, the step's frame, the trips run and
// the most allowed, all kept by callees; x9, x10 are scratch.
const a64::Gp until_scalars = a64::x19, step_scalars = a64::x20, trips = a64::x21, most = a64::x22;

class IterateEmitter {
 public:
  IterateEmitter(a64::Assembler& as, const Invoke& it, bool comments)
      : as_(as), shape_(it, until_scalars.id(), step_scalars.id()),
        trip_(as, shape_.frames, std::move(shape_.events), comments), pinned_(trip_.pin(shape_.carry_params)) {}

  void loop() {
    const asmjit::Label top = as_.newLabel(), exit = as_.newLabel();
    enter(as_);
    as_.mov(until_scalars, a64::x0);
    as_.mov(step_scalars, a64::x1);
    as_.mov(most, a64::x2);
    as_.mov(trips, a64::xzr);
    trip_.load(pinned_);
    as_.bind(top);
    trip_.start(pinned_);
    for (std::size_t e = 0; e < shape_.boundary; ++e) trip_.instruction(e);
    test_stop(exit);
    shape_.cross_boundary(trip_);
    for (std::size_t e = shape_.boundary + 1; e + 1 < trip_.size(); ++e) trip_.instruction(e);
    trip_.move_carry(shape_.carry_moves, pinned_);
    as_.add(trips, trips, 1);
    as_.b(top);
    as_.bind(exit);
    leave(as_);
  }

 private:
  // A true stop ends the loop with the carry (until's parameters) at home:
  // 0. Else past the most trips, 1: the caller raises (the stop at home).
  void test_stop(const asmjit::Label& exit) {
    const asmjit::Label go_on = as_.newLabel(), step = as_.newLabel();
    as_.ldrb(a64::w9, trip_.home(shape_.stop()));
    as_.cbz(a64::w9, go_on);
    trip_.store_cached(shape_.carry_params);
    as_.mov(a64::w0, 0);
    as_.b(exit);
    as_.bind(go_on);
    as_.cmp(trips, most);
    as_.b_ne(step);
    as_.mov(a64::w0, 1);
    as_.b(exit);
    as_.bind(step);
  }

  a64::Assembler& as_;
  IterateShape shape_;
  A64Trip trip_;
  Trip::Pinned pinned_;  // until's carry parameters
};

}  // namespace

const void* emit_iterate(const void* unit, const char*& why, const Instruction*& culprit) {
  const Invoke& it = *static_cast<const Invoke*>(unit);
  if ((why = iterate_refusal(it, culprit))) return nullptr;
  return assemble<a64::Assembler>([&](a64::Assembler& as) { IterateEmitter(as, it, false).loop(); }, why);
}

std::string iterate_listing(const Invoke& it) {
  const Instruction* culprit = nullptr;
  if (iterate_refusal(it, culprit)) return "";
  return assembly<a64::Assembler>([&](a64::Assembler& as) { IterateEmitter(as, it, true).loop(); });
}

}  // namespace rune::vm::native
