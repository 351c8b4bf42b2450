#include "vm/observer.hpp"

#include <cstdlib>
#include <iostream>

#include "vm/listing.hpp"

namespace rune::vm {

namespace {

// RUNE_VM_TRACE=1 prints every instruction executed, with its result, on
// stderr (read once): an observer in effect on every thread.
const bool tracing = [] {
  const char* v = std::getenv("RUNE_VM_TRACE");
  return v && std::atoi(v) != 0;
}();

Observer* every_thread = nullptr;
thread_local Observing* innermost = nullptr;
thread_local int every_instruction_observers = 0;

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

void observe_every_thread(Observer& observer) { every_thread = &observer; }

bool observed() { return tracing || innermost || every_thread; }
bool interpreting_only() { return tracing || every_instruction_observers > 0; }

void notify_before(const Code& code, const Instruction& in, const Frame& frame) {
  for (Observing* o = innermost; o; o = o->outer_) o->observer_.before(code, in, frame);
  if (every_thread) every_thread->before(code, in, frame);
}

void notify_after(const Code& code, const Instruction& in, const Frame& frame) {
  if (tracing) std::cerr << "vm: " << trace_line(code, in, frame) << '\n';
  for (Observing* o = innermost; o; o = o->outer_) o->observer_.after(code, in, frame);
  if (every_thread) every_thread->after(code, in, frame);
}

void notify_failed(const Code& code, const Instruction& in) {
  for (Observing* o = innermost; o; o = o->outer_) o->observer_.failed(code, in);
  if (every_thread) every_thread->failed(code, in);
}

}  // namespace rune::vm
