// The derivative rule of a function with a custom rule, as programs hold it
// (ir::Equation of kind custom); the templates of rune/custom.hpp make them.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "rune/detail/staging.hpp"
#include "rune/tensor.hpp"

namespace rune {
namespace ir {
struct Program;
}

namespace detail {

using Pullback = std::function<std::vector<nx::Tensor>(std::span<const nx::Tensor>)>;

struct CustomRule {
  virtual ~CustomRule() = default;
  // custom_jvp: the outputs and their tangents, from the inputs and their
  // tangents (the tangent map is written with nx functions: linear).
  virtual std::pair<std::vector<nx::Tensor>, std::vector<nx::Tensor>> jvp(
      std::span<const nx::Tensor> primals, std::span<const nx::Tensor> tangents) const = 0;
  // custom_vjp: the outputs and the pullback, from the inputs.
  virtual std::pair<std::vector<nx::Tensor>, Pullback> vjp(std::span<const nx::Tensor> primals) const = 0;
  // How many tensors the function takes (the equation's other inputs are
  // its program's captures).
  virtual std::size_t input_count() const = 0;
  // The function's outputs (eagerly: no program is needed).
  virtual std::vector<nx::Tensor> call(std::span<const nx::Tensor> inputs) const = 0;
  // The function traced over stand-ins of the inputs (when a program records
  // the call): its program, and the values of enclosing traces it reads.
  virtual std::pair<std::shared_ptr<const ir::Program>, std::vector<nx::Tensor>> trace(
      std::span<const nx::Tensor> inputs) const = 0;
  bool reverse_only = false;  // custom_vjp: no forward derivative
  std::string_view name() const { return reverse_only ? "custom_vjp" : "custom_jvp"; }
};

// Applies a function with a custom rule: eagerly it is called; under a
// differentiation its rule applies; a staging trace records it with the
// program the rule traces.
std::vector<nx::Tensor> bind_custom(std::shared_ptr<const CustomRule> rule, std::span<const nx::Tensor> inputs);

}  // namespace detail
}  // namespace rune
