// A linear map known by its transpose (a custom_vjp rule's pullback,
// traced; remat's and iterate's backward passes; see ir/program.hpp's
// LinearCall). It appears in linear programs
// only: transposing it evaluates the pullback's program.
#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "ops/errors.hpp"

namespace rune::constructs {

namespace {

// The inputs are the tangents of the function's inputs (some may be fixed
// zeros), then the pullback's captures (fixed); the program maps the output
// cotangents, then those captures, to the inputs' cotangents.
std::vector<nx::Tensor> transpose(const ir::Equation& eq, std::span<const nx::Tensor> inputs,
                                  std::span<const ir::TensorType>, std::span<const nx::Tensor> output_cts) {
  std::vector<nx::Tensor> args(output_cts.begin(), output_cts.end());
  for (std::size_t k = 0; k < args.size(); ++k)
    if (!args[k].defined()) args[k] = nx::ops::zeros_of(eq.code<ir::LinearCall>()->output_types[k]);
  const std::size_t residuals = eq.code<ir::LinearCall>()->transpose->params.size() - output_cts.size();
  const std::size_t tangents = inputs.size() - residuals;
  args.insert(args.end(), inputs.begin() + long(tangents), inputs.end());
  std::vector<nx::Tensor> in = ir::evaluate(*eq.code<ir::LinearCall>()->transpose, args);
  std::vector<nx::Tensor> cts(inputs.size());
  for (std::size_t i = 0; i < tangents; ++i)
    if (!inputs[i].defined()) cts[i] = in[i];
  return cts;
}

[[noreturn]] std::vector<nx::Tensor> eager(const ir::Equation&, std::span<const nx::Tensor>) {
  nx::ops::fail("rune::jvp", "a custom_vjp rule has no forward derivative; give the function a custom_jvp rule");
}

}  // namespace

const ir::ConstructRules linear_call_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::custom_vjp";
  r.output_types = [](const ir::Equation& eq, std::span<const ir::TensorType>) { return eq.code<ir::LinearCall>()->output_types; };
  r.eager = eager;
  r.transpose = transpose;
  return r;
}();

}  // namespace rune::constructs
