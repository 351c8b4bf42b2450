#include "vm/observer.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "ops/errors.hpp"
#include "vm/listing.hpp"

namespace rune::vm {

namespace {

// RUNE_VM_TRACE=1 prints every instruction executed, with its result, on
// stderr (read once): an observer in effect on every thread.
const bool tracing = [] {
  const char* v = std::getenv("RUNE_VM_TRACE");
  return v && std::atoi(v) != 0;
}();

// The observers in effect on every thread (null: a free place), how many
// there are, and how many of them must see every instruction.
std::array<std::atomic<Observer*>, 4> every_thread{};
std::atomic<int> every_thread_count{0}, every_thread_every_instruction{0};
std::mutex every_thread_changes;

// This thread's observers (the innermost scope's first), and how many of
// them must see every instruction.
thread_local Observing* innermost = nullptr;
thread_local int every_instruction_observers = 0;

template <class Call> void for_every_thread_observer(Call call) {
  if (every_thread_count.load(std::memory_order_acquire) == 0) return;
  for (std::atomic<Observer*>& slot : every_thread)
    if (Observer* o = slot.load(std::memory_order_acquire)) call(*o);
}

}  // namespace

Observing::Observing(Observer& observer, bool every_instruction)
    : observer_(observer), every_instruction_(every_instruction), outer_(innermost) {
  innermost = this;
  every_instruction_observers += every_instruction_;
}

Observing::~Observing() {
  innermost = outer_;
  every_instruction_observers -= every_instruction_;
}

void observe_every_thread(Observer& observer, bool every_instruction) {
  std::lock_guard lock(every_thread_changes);
  for (std::atomic<Observer*>& slot : every_thread)
    if (!slot.load()) {
      slot.store(&observer, std::memory_order_release);
      every_thread_count.fetch_add(1);
      every_thread_every_instruction.fetch_add(every_instruction);
      return;
    }
  nx::ops::internal_error("vm::observe_every_thread", "more than four observers");
}

void stop_observing_every_thread(Observer& observer, bool every_instruction) {
  std::lock_guard lock(every_thread_changes);
  for (std::atomic<Observer*>& slot : every_thread)
    if (slot.load() == &observer) {
      slot.store(nullptr, std::memory_order_release);
      every_thread_count.fetch_sub(1);
      every_thread_every_instruction.fetch_sub(every_instruction);
      return;
    }
}

bool observed() { return tracing || innermost || every_thread_count.load(std::memory_order_relaxed) > 0; }
bool interpreting_only() {
  return tracing || every_instruction_observers > 0 || every_thread_every_instruction.load(std::memory_order_relaxed) > 0;
}

void notify_before(const Code& code, const Instruction& in, const Frame& frame) {
  for (Observing* o = innermost; o; o = o->outer_) o->observer_.before(code, in, frame);
  for_every_thread_observer([&](Observer& o) { o.before(code, in, frame); });
}

void notify_after(const Code& code, const Instruction& in, const Frame& frame) {
  if (tracing) std::cerr << "vm: " << trace_line(code, in, frame) << '\n';
  for (Observing* o = innermost; o; o = o->outer_) o->observer_.after(code, in, frame);
  for_every_thread_observer([&](Observer& o) { o.after(code, in, frame); });
}

void notify_failed(const Code& code, const Instruction& in) {
  for (Observing* o = innermost; o; o = o->outer_) o->observer_.failed(code, in);
  for_every_thread_observer([&](Observer& o) { o.failed(code, in); });
}

}  // namespace rune::vm
