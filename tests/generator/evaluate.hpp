// Runs a description: every operation is the nx (or rune) call it names, so
// the same code computes eagerly and records under rune::program, rune::jit
// or rune::grad.
#pragma once

#include <span>
#include <vector>

#include "description.hpp"

namespace gen {

std::vector<nx::Tensor> evaluate(const Block& block, std::span<const nx::Tensor> params);
// The same with every map run as a loop over its lanes, its results
// stacked: the oracle of rune::vmap.
std::vector<nx::Tensor> evaluate_unmapped(const Block& block, std::span<const nx::Tensor> params);
// Whether the block holds an operation of that kind, at any depth (in_map:
// inside a map's body).
bool holds(const Block& block, Kind kind, bool in_map = false);

// The case's function as a callable of its argument vector.
inline auto function_of(const Case& c) {
  return [&block = c.function](const std::vector<nx::Tensor>& args) { return evaluate(block, args); };
}

}  // namespace gen
