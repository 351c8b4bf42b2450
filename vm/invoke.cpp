// Constructs run by their sub-codes: a body (remat, a custom rule's
// function), a cond's chosen branch, an iterate's until and step in turn
// (or its loop in machine code once promoted: vm/native/). Each sub-code
// runs in a frame of its own.
#include <algorithm>
#include <cstring>

#include "ir/construct.hpp"
#include "ops/concrete.hpp"
#include "ops/nan_hunt.hpp"
#include "vm/machine.hpp"
#include "vm/observer.hpp"

namespace rune::vm {

namespace {

// Runs `code` on the values at `inputs` of f, putting its results at `outputs`.
void run_on(const Code& code, std::span<const Location> inputs, Frame& f, std::span<const Location> outputs) {
  Frame sub(code);
  for (std::size_t k = 0; k < inputs.size(); ++k) copy(sub, code.params[k], f, inputs[k]);
  execute(code, sub);
  for (std::size_t k = 0; k < outputs.size(); ++k) copy(f, outputs[k], sub, code.results[k]);
}

// Whether every element of the stop (a bool value at `at`) is true.
bool all_stopped(const Frame& f, Location at) {
  if (at.scalar) return f.scalars[std::size_t(at.index)].bytes[0] != 0;
  const nx::Tensor stop = nx::ops::contiguous(f.tensors[std::size_t(at.index)]);
  const auto* b = reinterpret_cast<const unsigned char*>(nx::ops::base_address(*stop.impl()));
  return std::all_of(b, b + stop.numel(), [](unsigned char x) { return x != 0; });
}

}  // namespace

void run_body(const Invoke& body, Frame& f) { run_on(*body.codes[0], body.inputs, f, body.outputs); }

void run_cond(const Invoke& cond, Frame& f) {
  std::int32_t index = 0;  // an int32 scalar register
  std::memcpy(&index, f.scalars[std::size_t(cond.inputs[0].index)].bytes, sizeof index);
  const auto chosen = std::size_t(std::clamp<std::int64_t>(index, 0, std::int64_t(cond.codes.size()) - 1));
  run_on(*cond.codes[chosen], std::span(cond.inputs).subspan(1), f, cond.outputs);
}

void run_iterate(const Invoke& it, Frame& f) {
  const ir::IterateInfo& info = std::get<ir::IterateInfo>(it.equation->info);
  const Code &until = *it.codes[0], &step = *it.codes[1];
  const std::size_t carry = std::size_t(info.carry_count), until_captures = std::size_t(info.until_captures);
  Frame u(until), s(step);
  for (std::size_t k = 0; k < carry + until_captures; ++k) copy(u, until.params[k], f, it.inputs[k]);
  for (std::size_t k = carry + until_captures; k < it.inputs.size(); ++k)
    copy(s, step.params[k - until_captures + 1], f, it.inputs[k]);
  const auto still_running = [&] {
    ir::construct_rules(it.equation->kind).still_running(*it.equation, read(until, u, until.results[0]));
  };
  const auto promoted = interpreting_only() ? nullptr
                                               : native::as_loop<native::IterateLoop>(it.native->loop(
                                                     0, native::emit_iterate, &it, "an iterate", "trips"));
  if (promoted) {
    if (promoted(u.scalars.data(), s.scalars.data(), info.max) != 0) still_running();
  } else {
    // The carry sits in until's parameters; the step takes it from there
    // (moved: held by the step's parameter alone, it may be written in place
    // from the second trip on) and gives it back.
    std::int64_t trip = 0;
    try {
      for (;; ++trip) {
        execute(until, u);
        if (all_stopped(u, until.results[0])) break;
        if (trip == info.max) {  // (raised from this run, which knows the stop: a second run could end otherwise)
          it.native->ran(trip);
          still_running();
        }
        for (std::size_t k = 0; k < carry; ++k) move(s, step.params[k], u, until.params[k]);
        copy(s, step.params[carry], u, until.results[0]);
        execute(step, s);
        for (std::size_t k = 0; k < carry; ++k) copy(u, until.params[k], s, step.results[k]);
        for (std::int32_t reg : step.emptied_after_run) s.tensors[std::size_t(reg)] = nx::Tensor();
      }
    } catch (const nx::ops::NonFiniteError& e) {  // (a NaN hunt's: the trip it was made in)
      nx::ops::rethrow_non_finite(e, "in trip " + std::to_string(trip) + " of an iterate");
    }
    it.native->ran(trip);
  }
  for (std::size_t k = 0; k < carry; ++k) copy(f, it.outputs[k], u, until.params[k]);
}

}  // namespace rune::vm
