#include "ir/passes/fold.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/passes/canonical.hpp"
#include "ops/concrete.hpp"

namespace rune::ir {

namespace {

bool foldable(const Equation& eq) {
  return eq.kind == OpKind::primitive && !nx::ops::communicates(eq.prim);
}

// The constant a primitive on constant operands computes, when it is small
// enough to keep (see fold.hpp); nullopt when its rule throws.
std::optional<nx::Tensor> folded(const Equation& eq, std::span<const nx::Tensor> operands, const TensorType& type) {
  std::int64_t largest = 0;
  for (const nx::Tensor& t : operands) largest = std::max(largest, t.numel());
  const std::int64_t elements = nx::numel(type.shape);
  if (elements > largest || elements > max_folded_elements) return std::nullopt;
  try {
    // (a copy of its own, in C order: a view of another constant would share its storage)
    return nx::ops::copy(nx::ops::apply_eager(eq.prim, operands, eq.params, type));
  } catch (...) {
    return std::nullopt;
  }
}

Program with_folds(const Program& program) {
  Program out = program;
  std::unordered_map<int, nx::Tensor> constants;  // value -> its constant
  for (Equation& eq : out.equations) {
    for (auto& sub : eq.programs) sub = std::make_shared<Program>(with_folds(*sub));
    if (eq.kind == OpKind::constant) constants.emplace(eq.outputs[0], eq.constant);
    if (!foldable(eq)) continue;
    std::vector<nx::Tensor> operands;
    for (int v : eq.inputs)
      if (auto c = constants.find(v); c != constants.end()) operands.push_back(c->second);
    if (operands.size() != eq.inputs.size()) continue;
    std::optional<nx::Tensor> value = folded(eq, operands, program.types[std::size_t(eq.outputs[0])]);
    if (!value) continue;
    Equation constant;
    constant.kind = OpKind::constant;
    constant.constant = *value;
    constant.outputs = eq.outputs;
    eq = std::move(constant);
    constants.emplace(eq.outputs[0], eq.constant);
  }
  return out;
}

}  // namespace

Program fold_constants(const Program& program) { return canonical(with_folds(program)); }

}  // namespace rune::ir
