#include "constructs/scan.hpp"

#include "constructs/batched_program.hpp"

#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;


using batch::BatchTrace;

const ir::ScanInfo& info(const ir::Equation& eq) { return std::get<ir::ScanInfo>(eq.info); }

bool is_xs(const ir::Equation& eq, std::size_t i) {
  return i >= std::size_t(info(eq).carry_count) && i < std::size_t(info(eq).carry_count + info(eq).xs_count);
}

ir::TensorType param_type(const ir::Equation& eq, std::size_t i, const Tensor& value) {
  ir::TensorType t = nx::ops::type_of(value);
  if (is_xs(eq, i)) t.shape.erase(t.shape.begin());  // a row
  return t;
}

// The step for every lane at once, its parameters batched as `in` says; a
// carry that comes in batched goes out batched, and one the step makes
// batched while it came in unbatched is reported in results_batched.
BatchedProgram trace_step(BatchTrace& outer, const ir::Equation& eq, const LaneInputs& in) {
  std::vector<ir::TensorType> types;
  for (std::size_t i = 0; i < in.values.size(); ++i) types.push_back(param_type(eq, i, in.values[i]));
  const std::vector<bool> carried(in.batched.begin(), in.batched.begin() + info(eq).carry_count);
  return batch_program(outer, *eq.programs[0], types, in.batched, carried);
}

}  // namespace

std::vector<Tensor> scan_batched(BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  // (xs go in with their rows first, then the lanes)
  LaneInputs in = lane_inputs(trace, inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (is_xs(eq, i) && in.batched[i]) in.values[i] = nx::moveaxis(in.values[i], 0, 1);
  const std::size_t carries = std::size_t(info(eq).carry_count);
  // The fixpoint: while the step returns batched a carry it received
  // unbatched, batch that carry and trace the step again.
  BatchedProgram step = trace_step(trace, eq, in);
  auto newly_batched = [&] {
    for (std::size_t k = 0; k < carries; ++k)
      if (step.results_batched[k] && !in.batched[k]) return k;
    return carries;
  };
  for (std::size_t k = newly_batched(); k < carries; k = newly_batched()) {
    in.values[k] = trace.stacked(in.values[k]);
    in.batched[k] = true;
    step = trace_step(trace, eq, in);
  }
  std::vector<Tensor> scan_inputs = in.values;
  scan_inputs.insert(scan_inputs.end(), step.captures.begin(), step.captures.end());
  ir::Equation batched_scan = eq;
  batched_scan.programs = {step.program};
  std::vector<Tensor> outs = ir::bind_construct(batched_scan, scan_inputs, "rune::scan");
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (step.results_batched[k]) outs[k] = trace.wrap(k < carries ? outs[k] : nx::moveaxis(outs[k], 1, 0));
  return outs;
}

}  // namespace rune::constructs
