// What rune::jit needs from the layers below, without exposing programs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "rune/program.hpp"
#include "rune/tensor.hpp"
#include "rune/tree.hpp"

namespace rune {
namespace ir {
struct Program;
}
namespace vm {
struct Code;
}

namespace detail {

// A traced function ready to run for one key.
struct Executable {
  std::shared_ptr<const vm::Code> code;     // the program, simplified and compiled to bytecode
  std::shared_ptr<const void> result_like;  // the result's structure (its C++ type fixed by the key)
};

// The compiled form of a traced program: the passes, then the bytecode.
std::shared_ptr<const vm::Code> compile(std::shared_ptr<const ir::Program> traced);
// A call's result leaves: a few of them without allocating.
using Values = boost::container::small_vector<nx::Tensor, 4>;
// Runs compiled code on the argument leaves: donated storage is taken when
// the call returns; results share no storage with the arguments or the
// program's constants.
Values execute(const vm::Code& code, std::span<const nx::Tensor> args, std::span<const nx::Tensor> captures);
// The executable's program (after the passes) with its values' paths.
Program named_program(const Executable& exe, std::vector<std::string> params, std::vector<std::string> results);
// With RUNE_JIT_DEBUG set to a nonzero integer, prints on stderr the first
// difference of a new key from the latest call's. Once a compiled function
// (`warned` is its flag) has traced on retrace_warning_calls calls in a row,
// prints a warning naming what keeps changing, debugging or not.
inline constexpr int retrace_warning_calls = 8;
void report_retrace(const TreeKey& here, const TreeKey& previous, int traced_in_a_row, bool& warned);

}  // namespace detail
}  // namespace rune
