#include "ad/custom_rules.hpp"

#include <optional>

#include "ir/staging.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace rune::ad {

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

}  // namespace

std::vector<nx::Tensor> custom_jvp(JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  // The rule sees the function's inputs; the rest are its program's captures.
  const std::size_t count = eq.rule->input_count();
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
  if (!eq.rule->reverse_only) {
    std::tie(out, out_tangents) = eq.rule->jvp(p, t);
  } else {
    if (!trace.linearizing())
      nx::ops::fail("rune::jvp", "a custom_vjp rule has no forward derivative; give the function a custom_jvp rule");
    detail::Pullback pullback;
    std::tie(out, pullback) = eq.rule->vjp(p);
    auto [transpose, residuals] = trace_pullback(pullback, out);
    auto call = std::make_shared<ir::LinearCall>();
    call->transpose = transpose;
    for (const nx::Tensor& y : out) call->output_types.push_back(nx::ops::type_of(y));
    ir::Equation linear;
    linear.kind = ir::OpKind::linear_call;
    linear.call = call;
    std::vector<nx::Tensor> linear_inputs(t.begin(), t.end());
    linear_inputs.insert(linear_inputs.end(), residuals.begin(), residuals.end());
    out_tangents = ir::bind_construct(linear, linear_inputs, "rune::grad");
  }
  std::vector<nx::Tensor> wrapped;
  for (std::size_t k = 0; k < out.size(); ++k) wrapped.push_back(trace.wrap(out[k], out_tangents[k]));
  return wrapped;
}

}  // namespace rune::ad
