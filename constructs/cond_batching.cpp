// The cond construct under vmap. With one index for every lane: one cond
// whose branches are batched (each traced under a map), a result batched
// in one branch being batched in all. With one index per lane: each
// branch that some lane takes is computed for every lane, each lane that
// does not take it computing a donor's values in its place (the first lane
// that takes it: its operands, lane_index() included), and each lane
// selects the result of its own branch (its index clamped). So a lane never
// computes a branch at its own values unless it takes it: no error, check,
// effect, NaN or infinite derivative of an untaken branch exists.
#include "constructs/batched_program.hpp"
#include "constructs/cond.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using batch::BatchTrace;
using nx::Tensor;


const char* const gathering_other_branches =
    "a lane of rune::cond that takes another branch computes nothing in this one, so a branch cannot gather every "
    "lane; give every lane the same pred or index";

// Branch `program` for every lane where some lane takes it, else zeros: a
// cond on whether any lane does, whose operands are `taken` (a bool per
// lane) then every lane's values. Lanes that do not take it compute the
// first taking lane's values, on a map where they do not run.
std::vector<Tensor> where_taken(BatchTrace& trace, const ir::Program& program, const Tensor& taken,
                                const LaneInputs& in) {
  std::vector<ir::TensorType> types{nx::ops::type_of(taken)};
  for (const Tensor& v : in.values) types.push_back(nx::ops::type_of(v));
  ir::StagingTrace staging(trace.entry_point());
  std::vector<Tensor> results;
  {
    nx::ops::TraceScope staged(staging);
    std::vector<Tensor> params;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    const Tensor skipped = nx::logical_not(params[0]);
    std::vector<Tensor> operands(params.begin() + 1, params.end());
    if (trace.lanes() > 0) {  // (of no lane there is no donor, nor a value to compute)
      const Tensor donor = nx::argmax(params[0], 0);
      for (std::size_t i = 0; i < in.values.size(); ++i)
        if (in.batched[i]) operands[i] = from_donor(operands[i], skipped, donor);
    }
    batch::BatchTrace map(trace.entry_point(), trace.lanes(), trace.axis());
    map.continue_from(trace);
    map.run_only(params[0], gathering_other_branches);
    nx::ops::TraceScope mapped(map);
    for (std::size_t i = 0; i < operands.size(); ++i)
      if (in.batched[i]) operands[i] = map.wrap(operands[i]);
    for (const Tensor& r : ir::evaluate(program, operands)) results.push_back(map.stacked(r));
  }
  Branches branches;
  {
    ir::StagingTrace none(trace.entry_point());
    nx::ops::TraceScope staged(none);
    for (const ir::TensorType& t : types) none.add_param(t);
    std::vector<Tensor> zeros;
    for (const Tensor& r : results) zeros.push_back(nx::ops::zeros_of(nx::ops::type_of(r)));
    branches.add(none.finish(zeros), {});
  }
  branches.add(staging.finish(results), staging.captures());
  std::vector<Tensor> operands{taken};
  operands.insert(operands.end(), in.values.begin(), in.values.end());
  return bind_united(unite(branches, operands.size()), nx::cast(nx::any(taken), nx::int32), operands, "rune::cond");
}

// One index per lane: each lane's result from its own branch. Lanes that do
// not run in the map take none.
std::vector<Tensor> selected(BatchTrace& trace, const ir::Equation& eq, const Tensor& index,
                             std::span<const Tensor> inputs) {
  const Tensor clamped = nx::clamp(index, 0., double(eq.programs.size() - 1));
  const LaneInputs in = lane_inputs(trace, inputs);
  std::vector<Tensor> out;
  for (std::size_t b = 0; b < eq.programs.size(); ++b) {
    Tensor taken = nx::equal(clamped, double(b));
    if (trace.running().defined()) taken = nx::logical_and(taken, trace.running());
    const std::vector<Tensor> results = where_taken(trace, *eq.programs[b], taken, in);
    if (b == 0) {
      out = results;
      continue;
    }
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = nx::where(along_lanes(taken, out[k]), results[k], out[k]);
  }
  for (Tensor& t : out) t = trace.wrap(t);
  return out;
}

}  // namespace

std::vector<Tensor> cond_batched(BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  bool index_batched = false;
  const Tensor index = trace.lanes_of(inputs[0], &index_batched);
  if (index_batched) return selected(trace, eq, index, inputs.subspan(1));
  const LaneInputs in = lane_inputs(trace, inputs.subspan(1));
  const std::vector<bool> none(eq.programs[0]->results.size(), false);
  std::vector<BatchedProgram> traced;
  std::vector<bool> batched = none;  // in any branch
  for (const auto& program : eq.programs) {
    traced.push_back(batch_program(trace, *program, types_of(in.values), in.batched, none));
    for (std::size_t k = 0; k < batched.size(); ++k) batched[k] = batched[k] || traced.back().results_batched[k];
  }
  Branches branches;
  for (std::size_t b = 0; b < traced.size(); ++b) {
    if (traced[b].results_batched != batched) traced[b] = batch_program(trace, *eq.programs[b], types_of(in.values), in.batched, batched);
    branches.add(traced[b].program, traced[b].captures);
  }
  std::vector<Tensor> outs = bind_united(unite(branches, in.values.size()), index, in.values, "rune::cond");
  for (std::size_t k = 0; k < outs.size(); ++k)
    if (batched[k]) outs[k] = trace.wrap(outs[k]);
  return outs;
}

}  // namespace rune::constructs
