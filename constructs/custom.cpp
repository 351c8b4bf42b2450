// Functions with a custom rule (rune::custom_jvp, rune::custom_vjp): an
// equation that computes programs[0] (recorded) or calls its C++ (eager);
// forward mode and linearization of custom_jvp apply its tangent map;
// linearization of custom_vjp traces its pullback into a program, recorded
// as a linear call (linear_call.cpp; the values the pullback reads become
// residuals).
#include <optional>

#include "ad/jvp_trace.hpp"
#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

// The pullback traced over cotangents of the outputs: a program mapping
// (cotangents, captures) to the inputs' cotangents, and those captures.
std::pair<std::shared_ptr<const ir::Program>, std::vector<nx::Tensor>> trace_pullback(
    const detail::Pullback& pullback, std::span<const nx::Tensor> outputs) {
  ir::StagingTrace staging("rune::grad");
  std::shared_ptr<const ir::Program> program;
  {
    nx::ops::TraceScope scope(staging);
    std::vector<nx::Tensor> cts;
    for (const nx::Tensor& y : outputs) cts.push_back(staging.add_param(nx::ops::type_of(y)));
    program = staging.finish(pullback(cts));
  }
  return {program, staging.captures()};
}

std::vector<nx::Tensor> jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  // The rule sees the function's inputs; the rest are its program's captures.
  const std::size_t count = eq.code<ir::CustomRule>()->input_count();
  std::vector<nx::Tensor> primals, tangents;
  bool any = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    primals.push_back(trace.primal_of(inputs[i]));
    nx::Tensor t = trace.tangent_of(inputs[i]);
    if (i < count) any = any || t.defined();
    tangents.push_back(t.defined() ? t : nx::zeros_like(primals.back()));
  }
  if (!any) return ir::bind_construct(eq, primals, "rune::custom_jvp");
  std::span<const nx::Tensor> p(primals.data(), count), t(tangents.data(), count);
  std::vector<nx::Tensor> out, out_tangents;
  if (!eq.code<ir::CustomRule>()->reverse_only) {
    std::tie(out, out_tangents) = eq.code<ir::CustomRule>()->jvp(p, t);
  } else {
    if (!trace.linearizing())
      nx::ops::fail("rune::jvp", "a custom_vjp rule has no forward derivative; give the function a custom_jvp rule");
    detail::Pullback pullback;
    std::tie(out, pullback) = eq.code<ir::CustomRule>()->vjp(p);
    auto [transpose, residuals] = trace_pullback(pullback, out);
    auto call = std::make_shared<ir::LinearCall>();
    call->transpose = transpose;
    for (const nx::Tensor& y : out) call->output_types.push_back(nx::ops::type_of(y));
    ir::Equation linear;
    linear.kind = ir::OpKind::linear_call;
    linear.info = call;
    std::vector<nx::Tensor> linear_inputs(t.begin(), t.end());
    linear_inputs.insert(linear_inputs.end(), residuals.begin(), residuals.end());
    out_tangents = ir::bind_construct(linear, linear_inputs, "rune::grad");
  }
  std::vector<nx::Tensor> wrapped;
  for (std::size_t k = 0; k < out.size(); ++k) wrapped.push_back(trace.wrap(out[k], out_tangents[k]));
  return wrapped;
}

std::vector<ir::TensorType> output_types(const ir::Equation& eq, std::span<const ir::TensorType>) {
  std::vector<ir::TensorType> out;
  for (int v : eq.programs.at(0)->results) out.push_back(eq.programs[0]->types[std::size_t(v)]);
  return out;
}

// Recorded in a program, its program computes it; called directly, its C++.
std::vector<nx::Tensor> eager(const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  return eq.programs.empty() ? eq.code<ir::CustomRule>()->call(inputs) : ir::evaluate(*eq.programs[0], inputs);
}

void record(ir::Equation& eq, std::vector<nx::Tensor>& inputs) {
  if (!eq.programs.empty()) return;
  auto [program, captures] = eq.code<ir::CustomRule>()->trace(inputs);
  eq.programs = {program};
  inputs.insert(inputs.end(), captures.begin(), captures.end());
}

}  // namespace

const ir::ConstructRules custom_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::custom_jvp",  // (rune::custom_vjp for one: ir::entry_point);
  r.output_types = output_types;
  r.eager = eager;
  r.lowering = ir::Lowering::body;
  r.record = record;
  r.jvp = jvp;
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

std::vector<nx::Tensor> bind_custom(std::shared_ptr<const CustomRule> rule, std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::custom;
  eq.info = std::move(rule);
  return ir::bind_construct(eq, inputs, ir::entry_point(eq));
}

}  // namespace rune::detail
