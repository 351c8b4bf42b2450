#include "vm/nan_hunt.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "ops/concrete.hpp"
#include "ops/nan_hunt.hpp"
#include "rune/debug.hpp"
#include "vm/listing.hpp"
#include "vm/observer.hpp"
#include "vm/operands.hpp"

namespace rune::vm {

namespace {

// What an instruction computes, as the hunt's error names it: the
// primitive, or a kernel's primitives, then the instruction.
std::string maker(const Code& code, const Instruction& in) {
  std::string what;
  if (in.op == Op::fused) {
    what = "a fused kernel of";
    for (const FusedKernel::Step& step : code.kernels[std::size_t(in.aux)].steps)
      what += (what.back() == 'f' ? " " : ", ") + std::string(nx::ops::info(step.prim).api);
  } else {
    what = nx::ops::info(in.prim).api;
  }
  std::string text;  // (the listing's columns as single spaces)
  for (char c : instruction_text(code, in))
    if (c != ' ' || (!text.empty() && text.back() != ' ')) text += c;
  if (!text.empty() && text.back() == ' ') text.pop_back();
  return what + " (bytecode: " + text + ")";
}

// The instructions that compute values without an eager rule checking
// them: scalar instructions, fused kernels, and calls into a planned buffer
// (the others' eager rule checks their result: apply_eager).
bool checked_here(const Code& code, const Instruction& in) {
  switch (in.op) {
    case Op::call: return nx::ops::rules(code.calls[std::size_t(in.aux)].equation->prim).into != nullptr;
    case Op::construct:
    case Op::check:
    case Op::scan:
    case Op::body:
    case Op::cond:
    case Op::iterate:
    case Op::release:
    case Op::load:
    case Op::box: return false;
    default: return true;
  }
}

bool all_finite(const Code& code, const Instruction& in, const Frame& frame) {
  const Registers operands = reads(code, in);
  return std::all_of(operands.begin(), operands.end(), [&](Location at) {
    const nx::Tensor t = read(code, frame, at);
    return !t.defined() || nx::ops::first_non_finite(t) < 0;
  });
}

// Its operands are read before it runs (a call may write over one).
class NanHunter final : public Observer {
 public:
  void before(const Code& code, const Instruction& in, const Frame& frame) override {
    if (checked_here(code, in)) running_.push_back({&in, all_finite(code, in, frame)});
  }
  void failed(const Code&, const Instruction& in) override { finished(in); }
  void after(const Code& code, const Instruction& in, const Frame& frame) override {
    if (!finished(in)) return;
    const Code::Origin origin = code.origin_of(std::size_t(&in - code.instructions.data()));
    for (Location at : writes(code, in)) {
      const nx::Tensor value = read(code, frame, at);
      const std::int64_t element = value.defined() ? nx::ops::first_non_finite(value) : -1;
      if (element < 0) continue;
      if (origin.lanes && (value.shape().empty() ? origin.lanes.count == 1 : value.shape()[0] == origin.lanes.count))
        nx::ops::raise_non_finite_in_lane(maker(code, in), value, element, origin.site, origin.lanes.first,
                                          origin.lanes.count);
      nx::ops::raise_non_finite(maker(code, in), value, element, origin.site);
    }
  }

 private:
  struct Running {
    const Instruction* in;
    bool operands_finite;
  };
  // Whether `in` was running with finite operands (false too when the hunt
  // began while it ran).
  static bool finished(const Instruction& in) {
    if (running_.empty() || running_.back().in != &in) return false;
    const bool finite = running_.back().operands_finite;
    running_.pop_back();
    return finite;
  }
  static thread_local std::vector<Running> running_;
};
thread_local std::vector<NanHunter::Running> NanHunter::running_;

NanHunter hunter;
std::mutex switching;

}  // namespace

void hunt_nans(bool on) {
  std::lock_guard lock(switching);
  if (on == nx::ops::hunting_nans()) return;
  nx::ops::nan_hunt.store(on);
  if (on) observe_every_thread(hunter, true);
  else stop_observing_every_thread(hunter, true);
}

bool hunt_nans_from_environment() {
  const char* v = std::getenv("RUNE_DEBUG_NANS");
  const bool on = v && std::atoi(v) != 0;
  if (on) hunt_nans(true);
  return on;
}

}  // namespace rune::vm

namespace rune {

void debug_nans(bool on) { vm::hunt_nans(on); }
bool debugging_nans() { return nx::ops::hunting_nans(); }

}  // namespace rune
