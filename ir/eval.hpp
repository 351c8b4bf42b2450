// The reference interpreter: evaluates a program by binding each equation's
// primitive or construct, so evaluating under a trace transforms the program
// (staging it again, differentiating it, ...).
#pragma once

#include <span>
#include <vector>

#include "ir/program.hpp"

namespace rune::ir {

// Throws rune::run's errors unless args fit the program's parameters
// (count, definedness, dtype, shape).
void check_arguments(const Program& program, std::span<const nx::Tensor> args);

// The user's entry point of a construct, first in its errors.
std::string_view entry_point(const Equation& eq);

// The program's results for its parameters (captures included).
std::vector<nx::Tensor> evaluate(const Program& program, std::span<const nx::Tensor> args);

// A construct computed on concrete inputs (bind_construct with no trace).
std::vector<nx::Tensor> eager_construct(const Equation& eq, std::span<const nx::Tensor> inputs);


}  // namespace rune::ir
