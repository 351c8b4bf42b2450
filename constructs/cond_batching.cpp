// The cond construct under vmap. With one index for every lane: one cond
// whose branches are batched (each traced under a map), a result batched
// in one branch being batched in all. With one index per lane: every
// branch is computed for every lane, and each lane selects the result of
// its own branch (its index clamped), as nx::where does.
#include "constructs/batched_program.hpp"
#include "constructs/cond.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/concrete.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using batch::BatchTrace;
using nx::Tensor;


// One index per lane: each lane's result from its own branch (a branch is
// computed for every lane; the lanes that did not take it add nothing).
// `every_index`: every lane's index, along axis 0.
std::vector<Tensor> selected(BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs,
                             const Tensor& every_index) {
  const Tensor index = nx::clamp(inputs[0], 0., double(eq.programs.size() - 1));
  const Tensor every_branch = nx::clamp(every_index, 0., double(eq.programs.size() - 1));
  auto branch = [&](std::size_t b) {
    BatchTrace::OnlyLanes taking(trace, nx::equal(every_branch, double(b)));
    return ir::evaluate(*eq.programs[b], inputs.subspan(1));
  };
  std::vector<Tensor> out = branch(0);
  for (std::size_t b = 1; b < eq.programs.size(); ++b) {
    const std::vector<Tensor> results = branch(b);
    const Tensor taken = nx::equal(index, double(b));
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = nx::where(taken, results[k], out[k]);
  }
  return out;
}

}  // namespace

std::vector<Tensor> cond_batched(BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  bool index_batched = false;
  const Tensor index = trace.lanes_of(inputs[0], &index_batched);
  if (index_batched) return selected(trace, eq, inputs, index);
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
