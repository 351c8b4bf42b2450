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

// The observers in effect on every thread (null: a free place).
std::array<std::atomic<Observer*>, 4> every_thread{};
std::mutex every_thread_changes;

template <class Call> void for_every_thread_observer(Call call) {
  if (observers::on_every_thread.load(std::memory_order_acquire) == 0) return;
  for (std::atomic<Observer*>& slot : every_thread)
    if (Observer* o = slot.load(std::memory_order_acquire)) call(*o);
}

// RUNE_VM_TRACE=1 prints every instruction executed, with what it wrote, on
// stderr: an observer in effect on every thread from the start.
class Trace final : public Observer {
 public:
  void before(const Code&, const Instruction&, const Frame&) override {}
  void after(const Code& code, const Instruction& in, const Frame& frame) override {
    std::cerr << "vm: " << trace_line(code, in, frame) << '\n';
  }
  void failed(const Code&, const Instruction&) override {}
};

[[maybe_unused]] const bool trace_asked = [] {
  static Trace trace;
  const char* v = std::getenv("RUNE_VM_TRACE");
  if (v && std::atoi(v) != 0) observe_every_thread(trace, true);
  return v != nullptr;
}();

}  // namespace

Observing::Observing(Observer& observer, bool every_instruction)
    : observer_(observer), every_instruction_(every_instruction), outer_(observers::innermost) {
  observers::innermost = this;
  observers::every_instruction_here += every_instruction_;
}

Observing::~Observing() {
  observers::innermost = outer_;
  observers::every_instruction_here -= every_instruction_;
}

void observe_every_thread(Observer& observer, bool every_instruction) {
  std::lock_guard lock(every_thread_changes);
  for (std::atomic<Observer*>& slot : every_thread)
    if (!slot.load()) {
      slot.store(&observer, std::memory_order_release);
      observers::on_every_thread.fetch_add(1);
      observers::every_instruction_on_every_thread.fetch_add(every_instruction);
      return;
    }
  nx::ops::internal_error("vm::observe_every_thread", "more than four observers");
}

void stop_observing_every_thread(Observer& observer, bool every_instruction) {
  std::lock_guard lock(every_thread_changes);
  for (std::atomic<Observer*>& slot : every_thread)
    if (slot.load() == &observer) {
      slot.store(nullptr, std::memory_order_release);
      observers::on_every_thread.fetch_sub(1);
      observers::every_instruction_on_every_thread.fetch_sub(every_instruction);
      return;
    }
}

void notify_before(const Code& code, const Instruction& in, const Frame& frame) {
  for (Observing* o = observers::innermost; o; o = o->outer_) o->observer_.before(code, in, frame);
  for_every_thread_observer([&](Observer& o) { o.before(code, in, frame); });
}

void notify_after(const Code& code, const Instruction& in, const Frame& frame) {
  for (Observing* o = observers::innermost; o; o = o->outer_) o->observer_.after(code, in, frame);
  for_every_thread_observer([&](Observer& o) { o.after(code, in, frame); });
}

void notify_failed(const Code& code, const Instruction& in) {
  for (Observing* o = observers::innermost; o; o = o->outer_) o->observer_.failed(code, in);
  for_every_thread_observer([&](Observer& o) { o.failed(code, in); });
}

}  // namespace rune::vm
