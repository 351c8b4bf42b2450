// Dead-code elimination: removes the equations none of whose outputs is
// used (no equation has a side effect), in the program and its sub-programs.
#pragma once

#include "ir/program.hpp"

namespace rune::ir {

Program eliminate_dead_code(const Program& program);

}  // namespace rune::ir
