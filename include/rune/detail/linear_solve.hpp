// The linear solve given to rune::root, as programs hold it (C++ code).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::detail {

using LinearOperator = std::function<std::vector<nx::Tensor>(std::span<const nx::Tensor>)>;

struct LinearSolve {
  virtual ~LinearSolve() = default;
  // v with op(v) = b (the leaves of the point's structure).
  virtual std::vector<nx::Tensor> solve(const LinearOperator& op, std::span<const nx::Tensor> b) const = 0;
};

}  // namespace rune::detail
