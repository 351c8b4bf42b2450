// Traces that also process constructs (equations with sub-programs), and
// the dispatch of a construct: to the trace that owns an input, else eager.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "ir/program.hpp"
#include "ops/trace.hpp"

namespace rune::ir {

class Trace : public nx::ops::Trace {
 public:
  using nx::ops::Trace::Trace;
  // Computes a construct (eq's kind, fields and sub-programs; its inputs and
  // outputs are unset) over inputs of which one is this trace's, or any when
  // this trace stages.
  virtual std::vector<nx::Tensor> process_construct(const Equation& eq, std::span<const nx::Tensor> inputs) = 0;
  // Whether this trace is a map (rune::vmap) whose lanes compute what is
  // bound now: each lane runs it, so the map processes a construct that
  // every lane runs (ConstructRules::every_lane, or one whose programs hold
  // such a construct) even when it owns none of its inputs. (Not while its batching rule computes for every lane at
  // once, at the level below it.)
  virtual bool maps_lanes() const { return false; }
};

// Applies a construct: the innermost trace that owns an input processes it,
// and with none it runs eagerly; one that every lane of a map runs goes to
// the innermost map deeper than that trace whose lanes compute now, when
// there is one. `api` names the user's entry point.
std::vector<nx::Tensor> bind_construct(const Equation& eq, std::span<const nx::Tensor> inputs, std::string_view api);

// While one lives (on this thread), what is computed replays a computation
// already done (rune::remat's backward pass, a derivative computing a
// function again): constructs that must happen once per execution (adds to
// a rune::Total) are left out, at any depth (ir::replayed_part).
class Replay {
 public:
  Replay();
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;
};
bool replaying();

// A handle that carries only a type: what type rules are given when a
// program is checked or parsed.
nx::Tensor type_only(const TensorType& type);

}  // namespace rune::ir
