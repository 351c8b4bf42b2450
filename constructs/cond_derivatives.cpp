// The cond construct's derivatives: forward mode and linearization (conds
// over the branches' JVPs) and transposition (a cond over the transposed
// branches). The index has no derivative; only the branch taken is
// differentiated when the code runs.
#include <algorithm>

#include "ad/jvp_trace.hpp"
#include "ad/transpose.hpp"
#include "constructs/cond.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using ad::JvpTrace;
using nx::Tensor;

// A cond's inputs as primals and tangents, and which operands (inputs
// after the index) have a tangent.
struct Inputs {
  Tensor index;
  std::vector<Tensor> operands, tangents;
  std::vector<bool> slots;
  // The tangents of the operands that have one.
  std::vector<Tensor> slot_tangents() const {
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < operands.size(); ++i)
      if (slots[i]) out.push_back(tangents[i]);
    return out;
  }
};

struct BranchJvp {
  std::vector<Tensor> primal_out, tangent_out;  // a tangent for each float result
};

// A branch's JVP traced into `staging`: its parameters are the operands'
// primals, then the tangents of the slots (in `linear` when linearizing).
BranchJvp trace_branch_jvp(const ir::Program& branch, const Inputs& in, ir::StagingTrace& staging,
                           ir::StagingTrace* linear) {
  std::vector<Tensor> primals, tangents(in.operands.size());
  for (const Tensor& x : in.operands) primals.push_back(staging.add_param(nx::ops::type_of(x)));
  for (std::size_t i = 0; i < in.operands.size(); ++i)
    if (in.slots[i]) tangents[i] = (linear ? *linear : staging).add_param(nx::ops::type_of(in.operands[i]));
  JvpTrace jvp("rune::cond", linear);
  nx::ops::TraceScope scope(jvp);
  std::vector<Tensor> wrapped;
  for (std::size_t i = 0; i < primals.size(); ++i) wrapped.push_back(jvp.wrap(primals[i], tangents[i]));
  BranchJvp out;
  for (const Tensor& r : ir::evaluate(branch, wrapped)) {
    const Tensor primal = jvp.primal_of(r), tangent = jvp.tangent_of(r);
    out.primal_out.push_back(primal);
    if (nx::is_inexact(primal.dtype())) out.tangent_out.push_back(tangent.defined() ? tangent : nx::zeros_like(primal));
  }
  return out;
}

// The cond's outputs: each primal, with its tangent for the float ones.
std::vector<Tensor> wrap_outputs(JvpTrace& trace, std::span<const Tensor> primals, std::span<const Tensor> tangents) {
  std::vector<Tensor> out;
  std::size_t slot = 0;
  for (const Tensor& p : primals) out.push_back(nx::is_inexact(p.dtype()) ? trace.wrap(p, tangents[slot++]) : p);
  return out;
}

// Forward mode: one cond computing the primals and tangents.
std::vector<Tensor> forward(JvpTrace& trace, const ir::Equation& eq, const Inputs& in) {
  Branches branches;
  std::size_t results = 0;
  for (const auto& program : eq.programs) {
    ir::StagingTrace staging("rune::cond");
    BranchJvp s;
    {
      nx::ops::TraceScope scope(staging);
      s = trace_branch_jvp(*program, in, staging, nullptr);
    }
    results = s.primal_out.size();
    std::vector<Tensor> out = s.primal_out;
    out.insert(out.end(), s.tangent_out.begin(), s.tangent_out.end());
    auto jvp_program = staging.finish(out);
    branches.add(std::move(jvp_program), staging.captures());
  }
  std::vector<Tensor> operands = in.operands, tangents = in.slot_tangents();
  operands.insert(operands.end(), tangents.begin(), tangents.end());
  const std::vector<Tensor> outs = bind_united(unite(branches, operands.size()), in.index, operands, "rune::cond");
  const std::span<const Tensor> all(outs);
  return wrap_outputs(trace, all.first(results), all.subspan(results));
}

bool holds(const std::vector<Tensor>& values, const Tensor& t) {
  return std::any_of(values.begin(), values.end(), [&](const Tensor& v) { return v.impl() == t.impl(); });
}

// Linearization: a primal cond that also returns every branch's residuals
// (the branch taken gives its own, zeros stand for the others'), and a
// linear cond over the tangents and those residuals.
std::vector<Tensor> linearized(JvpTrace& trace, const ir::Equation& eq, const Inputs& in) {
  std::vector<std::unique_ptr<ir::StagingTrace>> primal_stagings;
  std::vector<BranchJvp> jvps;
  Branches linear_branches;  // each capturing its residuals
  for (const auto& program : eq.programs) {
    auto& staging = *primal_stagings.emplace_back(std::make_unique<ir::StagingTrace>("rune::cond"));
    ir::StagingTrace linear("rune::cond", false);
    nx::ops::TraceScope outer(staging);
    {
      nx::ops::TraceScope inner(linear);
      jvps.push_back(trace_branch_jvp(*program, in, staging, &linear));
    }
    auto linear_program = linear.finish(jvps.back().tangent_out);
    linear_branches.add(std::move(linear_program), linear.captures());
  }
  const std::vector<Tensor> tangents = in.slot_tangents();
  UnitedBranches linear = unite(linear_branches, tangents.size());

  Branches primal_branches;
  for (std::size_t b = 0; b < eq.programs.size(); ++b) {
    ir::StagingTrace& staging = *primal_stagings[b];
    const std::vector<Tensor>& own = linear_branches.captures[b];
    std::vector<Tensor> results = jvps[b].primal_out;
    {
      nx::ops::TraceScope scope(staging);  // (the zeros are constants of this branch)
      for (const Tensor& r : linear.captures)
        results.push_back(holds(own, r) ? r : nx::ops::zeros_of(nx::ops::type_of(r)));
    }
    auto primal_program = staging.finish(results);
    primal_branches.add(std::move(primal_program), staging.captures());
  }
  const std::vector<Tensor> outs =
      bind_united(unite(primal_branches, in.operands.size()), in.index, in.operands, "rune::cond");
  const std::size_t results = jvps[0].primal_out.size();
  linear.captures.assign(outs.begin() + long(results), outs.end());  // the residuals, as the primal cond gives them
  const std::vector<Tensor> touts = bind_united(linear, in.index, tangents, "rune::cond");
  return wrap_outputs(trace, std::span<const Tensor>(outs).first(results), touts);
}

bool has_float_result(const ir::Program& branch) {
  for (int v : branch.results)
    if (nx::is_inexact(branch.types[std::size_t(v)].dtype)) return true;
  return false;
}

}  // namespace

std::vector<Tensor> cond_jvp(JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  Inputs in;
  in.index = trace.primal_of(inputs[0]);
  std::vector<Tensor> primals{in.index};
  for (const Tensor& t : inputs.subspan(1)) {
    in.operands.push_back(trace.primal_of(t));
    in.tangents.push_back(trace.tangent_of(t));
    in.slots.push_back(in.tangents.back().defined() && nx::is_inexact(t.dtype()));
    primals.push_back(in.operands.back());
  }
  if (std::find(in.slots.begin(), in.slots.end(), true) == in.slots.end() || !has_float_result(*eq.programs[0]))
    return ir::bind_construct(eq, primals, "rune::cond");
  return trace.linearizing() ? linearized(trace, eq, in) : forward(trace, eq, in);
}

std::vector<Tensor> cond_transpose(const ir::Equation& eq, std::span<const Tensor> inputs,
                                   std::span<const ir::TensorType> types, std::span<const Tensor> output_cts) {
  const ir::Program& first = *eq.programs[0];
  // The transposed branches take the output cotangents, then the fixed
  // operands, and return the linear operands' cotangents.
  std::vector<Tensor> operands;
  for (std::size_t k = 0; k < first.results.size(); ++k)
    operands.push_back(output_cts[k].defined() ? output_cts[k]
                                               : nx::ops::zeros_of(first.types[std::size_t(first.results[k])]));
  std::vector<std::size_t> linear;  // (inputs after the index)
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].defined()) operands.push_back(inputs[i]);
    else linear.push_back(i);
  }
  Branches transposed;
  for (const auto& program : eq.programs) {
    ir::StagingTrace staging("rune::grad");
    std::vector<Tensor> results;
    {
      nx::ops::TraceScope scope(staging);
      std::vector<Tensor> cts, params(inputs.size() - 1);
      for (std::size_t k = 0; k < first.results.size(); ++k)
        cts.push_back(staging.add_param(nx::ops::type_of(operands[k])));
      for (std::size_t i = 1; i < inputs.size(); ++i)
        if (inputs[i].defined()) params[i - 1] = staging.add_param(types[i]);
      const std::vector<Tensor> param_cts = ad::transpose(*program, params, cts);
      for (std::size_t i : linear) results.push_back(param_cts[i - 1]);
    }
    auto transposed_program = staging.finish(results);
    transposed.add(std::move(transposed_program), staging.captures());
  }
  const std::vector<Tensor> outs = bind_united(unite(transposed, operands.size()), inputs[0], operands, "rune::grad");
  std::vector<Tensor> cts(inputs.size());
  for (std::size_t j = 0; j < linear.size(); ++j) cts[linear[j]] = outs[j];
  return cts;
}

}  // namespace rune::constructs
