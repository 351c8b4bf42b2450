// Which executor runs a program on concrete values: the VM, or the
// reference interpreter (ir::evaluate) when the environment variable
// RUNE_EXECUTOR is `reference` (read once). The tests run programs on both
// and compare the bits.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "vm/code.hpp"

namespace rune::vm {

bool reference_selected();

// The program's results for args. `code` is the program compiled. The VM
// runs it when every argument is concrete and no trace is active; the
// reference interpreter otherwise, binding each equation, so an enclosing
// trace (grad, vmap, jit) sees the program's equations. A donated argument
// throws, naming `api`.
Values execute(const Code& code, std::span<const nx::Tensor> args, std::string_view api);

// The same, each result in storage of its own: one sharing an argument's
// storage or a constant's is copied (a result must outlive a donated
// argument, and donating a result must leave the arguments readable and
// the program whole). rune::jit's calls.
Values execute_apart(const Code& code, std::span<const nx::Tensor> args, std::string_view api);

// The same, on concrete arguments only, with the results written into
// `buffers` (C-order caller memory of the results' types, checked by the
// caller): nothing is allocated beyond the pooled buffers of the run.
void execute_into(const Code& code, std::span<const nx::Tensor> args, std::span<const nx::Tensor> buffers,
                  std::string_view api);

}  // namespace rune::vm
