// The checks of a generated case. Each gives what it found wrong, or an
// empty string when the check holds.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <rune/program.hpp>

#include "description.hpp"
#include "executors.hpp"
#include "ir/program.hpp"

namespace gen {

// The program prints, parses back to an equal program, and that prints the
// same text.
std::string check_round_trip(const rune::Program& traced);
// Whether the program has text: none when it holds C++ code (an nx::check,
// as the derivative of an iterate does, a callback, a custom rule, a
// linear solve).
bool has_text(const rune::ir::Program& program);
// Same count, dtypes, shapes and bytes (NaNs with their payloads).
std::string compare_bits(std::span<const nx::Tensor> expected, std::span<const nx::Tensor> got);
// The results have the types the description's model gives them.
std::string check_types(std::span<const nx::Tensor> results, const Block& block);
// f traced over args (into *traced) round trips (when it has text), and
// every executor gives the bits of `eager` (f's eager results).
std::string check_function(const Function& f, const std::vector<nx::Tensor>& args,
                           const std::vector<nx::Tensor>& eager, rune::Program* traced);

}  // namespace gen
