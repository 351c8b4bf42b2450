// The scalar objective of a gradient case and the central differences the
// derivative checks compare with.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "description.hpp"
#include "rng.hpp"

namespace gen {

// J(args): each result of the block weighted by a fixed tensor, summed.
struct Objective {
  const Block& block;
  std::vector<nx::Tensor> weights;
  nx::Tensor operator()(const std::vector<nx::Tensor>& args) const;
};
Objective objective_of(const Case& c, Rng& rng);

// Random smooth tensors of the case's parameter types: directions.
std::vector<nx::Tensor> random_direction(const Case& c, Rng& rng);
// sum_i sum(a_i * b_i), as a tensor (differentiable) or its value.
nx::Tensor inner_product(const std::vector<nx::Tensor>& a, const std::vector<nx::Tensor>& b);
double inner(const std::vector<nx::Tensor>& a, const std::vector<nx::Tensor>& b);

// Both NaN, or within `tolerance` of each other (relative).
bool agree(double a, double b, double tolerance);

using ScalarFunction = std::function<double(const std::vector<nx::Tensor>&)>;

// Central differences of f along v at h and h/2 compared with a derivative.
// Where they disagree with each other, a kink (or a jump) is near x, and
// where f is so large that rounding f swamps them: nothing can be concluded. Where they agree, the derivative must match the
// finer one within `tolerance` (relative) plus its truncation error, about
// a third of their disagreement. Where f's values are so large that their
// rounding alone could move the differences by that tolerance (integers
// near 2^31 converted into the objective), nothing can be concluded either.
struct DifferenceCheck {
  bool conclusive = false;
  std::string failure;  // empty when it holds
};
DifferenceCheck compare_with_differences(const ScalarFunction& f, const std::vector<nx::Tensor>& x,
                                         const std::vector<nx::Tensor>& v, double derivative, double tolerance);

}  // namespace gen
