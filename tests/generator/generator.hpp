// A seeded generator of random programs over the primitive table and the
// constructs: a seed gives a case (a description of operations and the
// arguments to call it on), the same on every run and platform.
//
//   gen::Case c = gen::generate(seed);
//   std::vector<nx::Tensor> out = gen::evaluate(c.function, c.args);  // eagerly
//   rune::Program p = rune::program(gen::function_of(c), c.args);   // traced
#pragma once

#include <string>

#include "evaluate.hpp"
#include "description.hpp"

namespace gen {

Case generate(std::uint64_t seed);

// The description as text, one operation a line, for failure reports.
std::string to_string(const Block& block);

}  // namespace gen
