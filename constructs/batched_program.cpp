#include "constructs/batched_program.hpp"

#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/concrete.hpp"

namespace rune::constructs {

LaneInputs lane_inputs(batch::BatchTrace& map, std::span<const nx::Tensor> inputs, std::size_t stacked) {
  LaneInputs out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    bool batched = true;
    out.values.push_back(i < stacked ? map.stacked(inputs[i]) : map.lanes_of(inputs[i], &batched));
    out.batched.push_back(batched);
  }
  return out;
}

std::vector<ir::TensorType> types_of(std::span<const nx::Tensor> values) {
  std::vector<ir::TensorType> out;
  for (const nx::Tensor& v : values) out.push_back(nx::ops::type_of(v));
  return out;
}

BatchedProgram batch_program(batch::BatchTrace& map, const ir::Program& program, std::span<const ir::TensorType> types,
                             const std::vector<bool>& batched, const std::vector<bool>& stack,
                             const std::function<void(batch::BatchTrace&)>& prepare) {
  ir::StagingTrace staging(map.entry_point());
  BatchedProgram out;
  std::vector<nx::Tensor> results;
  {
    nx::ops::TraceScope staged(staging);
    std::vector<nx::Tensor> params;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    batch::BatchTrace lanes(map.entry_point(), map.lanes(), map.axis());
    lanes.continue_from(map);
    if (prepare) prepare(lanes);
    nx::ops::TraceScope mapped(lanes);
    for (std::size_t i = 0; i < params.size(); ++i)
      if (batched[i]) params[i] = lanes.wrap(params[i]);
    for (const nx::Tensor& r : ir::evaluate(program, params)) {
      bool is_batched = false;
      nx::Tensor value = lanes.lanes_of(r, &is_batched);
      const bool stacked = results.size() < stack.size() && stack[results.size()];
      results.push_back(stacked ? lanes.stacked(r) : value);
      out.results_batched.push_back(stacked || is_batched);
    }
  }
  out.program = staging.finish(results);
  out.captures = staging.captures();
  return out;
}

}  // namespace rune::constructs
