// The staging trace: records what a function computes as a program.
//
// Its values are stand-ins (a type, no elements). An operand it does not own
// is lifted: a concrete value becomes a constant equation, a value of an
// enclosing trace becomes a capture (an extra parameter, listed by
// captures(), that the enclosing trace passes in).
#pragma once

#include <memory>
#include <unordered_map>

#include "ir/trace.hpp"

namespace rune::ir {

class StagingTrace final : public Trace {
 public:
  // A staging trace that `stages` owns every value made while it is the
  // innermost staging trace (omnistaging: what a traced function computes
  // from constants is recorded too); one that does not records only
  // operations on its own values (the linear part of a derivative).
  explicit StagingTrace(std::string_view entry_point, bool stages = true);

  // A new parameter of the program, as a stand-in.
  nx::Tensor add_param(const TensorType& type);
  nx::Tensor process(Prim p, std::span<const nx::Tensor> operands, const Params& params,
                     const TensorType& type) override;
  std::vector<nx::Tensor> process_construct(const Equation& eq, std::span<const nx::Tensor> inputs) override;
  // (noted when the last equation recorded made the value: a batching rule
  // ending in the primitive itself; otherwise its lanes need not be along
  // axis 0 of what made them)
  void holds_lanes(const nx::Tensor& value, std::int64_t lanes) override;
  // The program computing `results` (lifted like operands); the capture
  // parameters follow the others.
  std::shared_ptr<const Program> finish(std::span<const nx::Tensor> results);
  // The enclosing values captured, in the order of their parameters.
  const std::vector<nx::Tensor>& captures() const { return captures_; }

 private:
  int lift(const nx::Tensor& t);
  nx::Tensor stand_in(int value);

  Program program_;
  std::vector<nx::Tensor> captures_;
  std::vector<int> capture_params_;
  // Values lifted so far, by handle (holding the handle keeps the key alive).
  std::unordered_map<const nx::detail::TensorImpl*, std::pair<nx::Tensor, int>> lifted_;
};

}  // namespace rune::ir
