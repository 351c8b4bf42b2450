// An iterate's loop in machine code (x86-64, System V): until's
// instructions, the stop tested, the step's instructions (trip.hpp), the
// carry moved back, in turn; the float carry held in xmm registers across
// trips, until's carry parameters and the step's the same registers.
#include <asmjit/x86.h>

#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/loops.hpp"
#include "vm/native/x86/trip.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;

// General registers: until's frame, the step's frame, the trips run and
// the most allowed, all kept by callees; rax and rdx are scratch.
const x86::Gp until_scalars = x86::rbx, step_scalars = x86::r15, trips = x86::r13, most = x86::r14;

class IterateEmitter {
 public:
  IterateEmitter(x86::Assembler& as, const Invoke& it, bool comments)
      : as_(as), shape_(it, until_scalars.id(), step_scalars.id()),
        trip_(as, shape_.frames, std::move(shape_.events), comments), pinned_(trip_.pin(shape_.carry_params)) {}

  void loop() {
    const asmjit::Label top = as_.newLabel(), exit = as_.newLabel();
    for (const x86::Gp& saved : {x86::rbx, x86::r13, x86::r14, x86::r15}) as_.push(saved);
    as_.sub(x86::rsp, 24);  // a call-out's two stack arguments, 16-byte aligned
    as_.mov(until_scalars, x86::rdi);
    as_.mov(step_scalars, x86::rsi);
    as_.mov(most, x86::rdx);
    as_.xor_(trips.r32(), trips.r32());
    trip_.load(pinned_);
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    trip_.start(pinned_);
    for (std::size_t e = 0; e < shape_.boundary; ++e) trip_.instruction(e);
    test_stop(exit);
    shape_.cross_boundary(trip_);
    for (std::size_t e = shape_.boundary + 1; e + 1 < trip_.size(); ++e) trip_.instruction(e);
    trip_.move_carry(shape_.carry_moves, pinned_);
    as_.inc(trips);
    as_.jmp(top);
    as_.bind(exit);
    as_.add(x86::rsp, 24);
    for (const x86::Gp& saved : {x86::r15, x86::r14, x86::r13, x86::rbx}) as_.pop(saved);
    as_.ret();
  }

 private:
  // A true stop ends the loop with the carry (until's parameters) at home:
  // 0. Else past the most trips, 1: the caller raises (the stop at home).
  void test_stop(const asmjit::Label& exit) {
    const asmjit::Label go_on = as_.newLabel(), step = as_.newLabel();
    as_.cmp(trip_.home(shape_.stop()), 0);
    as_.je(go_on);
    trip_.store_cached(shape_.carry_params);
    as_.xor_(x86::eax, x86::eax);
    as_.jmp(exit);
    as_.bind(go_on);
    as_.cmp(trips, most);
    as_.jne(step);
    as_.mov(x86::eax, 1);
    as_.jmp(exit);
    as_.bind(step);
  }

  x86::Assembler& as_;
  IterateShape shape_;
  X86Trip trip_;
  Trip::Pinned pinned_;  // until's carry parameters
};

}  // namespace

const void* emit_iterate(const void* unit, const char*& why, const Instruction*& culprit) {
  const Invoke& it = *static_cast<const Invoke*>(unit);
  if ((why = iterate_refusal(it, culprit))) return nullptr;
  return assemble<x86::Assembler>([&](x86::Assembler& as) { IterateEmitter(as, it, false).loop(); }, why);
}

std::string iterate_listing(const Invoke& it) {
  const Instruction* culprit = nullptr;
  if (iterate_refusal(it, culprit)) return "";
  return assembly<x86::Assembler>([&](x86::Assembler& as) { IterateEmitter(as, it, true).loop(); });
}

}  // namespace rune::vm::native
