// The reference interpreter: evaluates a program by binding each equation's
// primitive or construct, so evaluating under a trace transforms the program
// (staging it again, differentiating it, ...). On concrete values it is the
// VM's oracle: the constructs it meets run by their eager rules, all the
// way down.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/program.hpp"

namespace rune::ir {

// Throws `api`'s errors unless args fit the program's parameters (count,
// definedness, dtype, shape): "rune::run: argument 0 is float32 [2], the
// program takes float64 [2]", an argument named by its path where `names`
// gives one ("argument 0.position").
void check_arguments(const Program& program, std::span<const nx::Tensor> args, std::string_view api = "rune::run",
                     std::span<const std::string> names = {});
// The same for tensors receiving the results (Loaded::into, run_into):
// writable caller memory (nx::borrow) in C order, of the results' types.
void check_result_buffers(const Program& program, std::span<const nx::Tensor> buffers, std::string_view api,
                          std::span<const std::string> names = {});

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
