// What the misuses below share: a struct not declared with RUNE_TREE, and
// an objective.
#pragma once
#include <rune/rune.hpp>

using nx::Tensor;

struct Undeclared {
  Tensor a, b;
};
inline Tensor objective(const Tensor& x) { return nx::sum(x * x); }
