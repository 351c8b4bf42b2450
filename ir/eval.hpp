// The reference interpreter: evaluates a program by binding each equation's
// primitive or construct, so evaluating under a trace transforms the program
// (staging it again, differentiating it, ...). On concrete values it is the
// VM's oracle: the constructs it meets run by their eager rules, all the
// way down.
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

// A construct computed on concrete inputs by its eager rule (what the
// reference interpreter does).
std::vector<nx::Tensor> eager_construct(const Equation& eq, std::span<const nx::Tensor> inputs);

// A construct bound on concrete inputs outside the reference interpreter
// (an eager rune::scan, say): compiled and run on the VM, as the construct
// table's lowering says (defined in vm/executor.cpp, above this layer).
std::vector<nx::Tensor> run_construct(const Equation& eq, std::span<const nx::Tensor> inputs);


}  // namespace rune::ir
