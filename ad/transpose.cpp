#include "ad/transpose.hpp"

#include <optional>

#include "ir/construct.hpp"
#include "ops/derivatives.hpp"
#include "ops/errors.hpp"

namespace rune::ad {

namespace {

struct Transposer {
  const ir::Program& p;
  std::vector<nx::Tensor> fixed;      // by value index: values of the fixed values
  std::vector<bool> linear;           // by value index
  std::vector<nx::Tensor> cotangent;  // by value index: the sum so far (undefined: none)

  void contribute(int v, const nx::Tensor& ct) {
    if (!ct.defined()) return;
    nx::Tensor& sum = cotangent[std::size_t(v)];
    sum = sum.defined() ? sum + ct : ct;
  }

  // The cotangents of an equation's outputs, or nothing when none has one.
  std::optional<std::vector<nx::Tensor>> output_cotangents(const ir::Equation& eq) const {
    std::vector<nx::Tensor> cts;
    bool any = false;
    for (int v : eq.outputs) {
      cts.push_back(cotangent[std::size_t(v)]);
      any = any || cts.back().defined();
    }
    if (!any) return std::nullopt;
    return cts;
  }

  // A construct: its table's transpose rule.
  void construct(const ir::Equation& eq) {
    auto cts = output_cotangents(eq);
    if (!cts) return;
    const auto& rules = ir::construct_rules(eq.kind);
    if (!rules.transpose)
      nx::ops::internal_error("the transpose rule of " + std::string(rules.entry_point),
                              "missing (linear programs hold linear constructs)");
    std::vector<nx::Tensor> operands;
    std::vector<ir::TensorType> types;
    for (int v : eq.inputs) {
      operands.push_back(linear[std::size_t(v)] ? nx::Tensor() : fixed[std::size_t(v)]);
      types.push_back(p.types[std::size_t(v)]);
    }
    std::vector<nx::Tensor> in = rules.transpose(eq, operands, types, *cts);
    for (std::size_t i = 0; i < eq.inputs.size(); ++i)
      if (linear[std::size_t(eq.inputs[i])]) contribute(eq.inputs[i], in[i]);
  }

  void equation(const ir::Equation& eq) {
    if (eq.kind != ir::OpKind::primitive) return construct(eq);
    const nx::Tensor ct = cotangent[std::size_t(eq.outputs[0])];
    if (!ct.defined()) return;
    std::vector<nx::Tensor> operands;
    std::vector<ir::TensorType> types;
    for (int v : eq.inputs) {
      operands.push_back(linear[std::size_t(v)] ? nx::Tensor() : fixed[std::size_t(v)]);
      types.push_back(p.types[std::size_t(v)]);
    }
    const auto& rules = nx::ops::rules(eq.prim);
    const std::string_view api = nx::ops::info(eq.prim).api;
    if (!rules.transpose)
      nx::ops::internal_error("the transpose rule of " + std::string(api), "missing (linear programs hold linear primitives)");
    std::vector<nx::Tensor> cts(eq.inputs.size());
    nx::ops::call_rule("transpose", api, [&] { rules.transpose(eq.prim, ct, operands, types, eq.params, cts); });
    for (std::size_t i = 0; i < eq.inputs.size(); ++i)
      if (linear[std::size_t(eq.inputs[i])]) contribute(eq.inputs[i], cts[i]);
  }
};

}  // namespace

std::vector<nx::Tensor> transpose(const ir::Program& linear, std::span<const nx::Tensor> params,
                                  std::span<const nx::Tensor> result_cotangents) {
  Transposer t{linear, std::vector<nx::Tensor>(linear.types.size()), std::vector<bool>(linear.types.size(), false),
               std::vector<nx::Tensor>(linear.types.size())};
  for (std::size_t i = 0; i < linear.params.size(); ++i) {
    const auto v = std::size_t(linear.params[i]);
    if (params[i].defined()) t.fixed[v] = params[i];
    else t.linear[v] = true;
  }
  // Forward: which values are linear; constants are fixed values.
  for (const ir::Equation& eq : linear.equations) {
    if (eq.kind == ir::OpKind::constant) t.fixed[std::size_t(eq.outputs[0])] = eq.constant;
    bool any = false;
    for (int v : eq.inputs) any = any || t.linear[std::size_t(v)];
    for (int v : eq.outputs) t.linear[std::size_t(v)] = any;
  }
  for (std::size_t i = 0; i < linear.results.size(); ++i)
    if (t.linear[std::size_t(linear.results[i])]) t.contribute(linear.results[i], result_cotangents[i]);
  for (auto eq = linear.equations.rbegin(); eq != linear.equations.rend(); ++eq) {
    if (eq->kind == ir::OpKind::constant) continue;
    const nx::detail::Placing here(eq->site);  // (the transpose's equations are placed where the value was made)
    t.equation(*eq);
  }
  std::vector<nx::Tensor> out;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto v = std::size_t(linear.params[i]);
    if (params[i].defined()) out.emplace_back();
    else out.push_back(t.cotangent[v].defined() ? t.cotangent[v] : nx::ops::zeros_of(linear.types[v]));
  }
  return out;
}

}  // namespace rune::ad
