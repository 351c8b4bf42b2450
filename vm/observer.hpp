// Watching the VM run: an observer sees every instruction that a thread's
// dispatch loops run (those of sub-codes, a scan's step row by row,
// included), before and after it runs, or when it throws. The instruction
// trace (RUNE_VM_TRACE=1) and the profiler (vm/profiler.hpp) are observers.
// A thread with none runs the plain dispatch loop: nothing is asked per
// instruction.
#pragma once

#include <atomic>

#include "vm/machine.hpp"

namespace rune::vm {

class Observer {
 public:
  virtual void before(const Code& code, const Instruction& in, const Frame& frame) = 0;
  virtual void after(const Code& code, const Instruction& in, const Frame& frame) = 0;
  // The instruction threw (after() is not called for it).
  virtual void failed(const Code& code, const Instruction& in) = 0;

 protected:
  ~Observer() = default;
};

// Puts an observer in effect on this thread for the scope's life (the
// latest first, before those on every thread). One that
// must see every instruction (`every_instruction`) keeps the loops the
// machine-code tier promoted on the VM meanwhile; otherwise a promoted loop
// runs as machine code and is seen as its one instruction (a profile
// measures what runs).
class Observing {
 public:
  Observing(Observer& observer, bool every_instruction);
  ~Observing();
  Observing(const Observing&) = delete;
  Observing& operator=(const Observing&) = delete;

 private:
  friend void notify_before(const Code&, const Instruction&, const Frame&);
  friend void notify_after(const Code&, const Instruction&, const Frame&);
  friend void notify_failed(const Code&, const Instruction&);
  Observer& observer_;
  bool every_instruction_;
  Observing* outer_;
};

// Puts an observer in effect on every thread until it is taken away
// (RUNE_VM_TRACE=1's trace, RUNE_PROFILE=1's profiler, the NaN hunt), at
// most four at once; `every_instruction` as for Observing.
void observe_every_thread(Observer& observer, bool every_instruction);
void stop_observing_every_thread(Observer& observer, bool every_instruction);

namespace observers {
// (read by the inline checks below, on every run of a code: a scan's step
// asks once per row)
inline constinit thread_local Observing* innermost = nullptr;
inline constinit thread_local int every_instruction_here = 0;
inline constinit std::atomic<int> on_every_thread{0}, every_instruction_on_every_thread{0};
}  // namespace observers

// Whether any observer is in effect on this thread, and whether one must
// see every instruction (then nothing runs as machine code).
inline bool observed() {
  return observers::innermost || observers::on_every_thread.load(std::memory_order_relaxed) > 0;
}
inline bool interpreting_only() {
  return observers::every_instruction_here > 0 ||
         observers::every_instruction_on_every_thread.load(std::memory_order_relaxed) > 0;
}

// What the dispatch loop tells this thread's observers.
void notify_before(const Code& code, const Instruction& in, const Frame& frame);
void notify_after(const Code& code, const Instruction& in, const Frame& frame);
void notify_failed(const Code& code, const Instruction& in);

}  // namespace rune::vm
