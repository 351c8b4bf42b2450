// Dead-code elimination: removes the equations none of whose outputs is
// used, in the program and its sub-programs; checks and callbacks stay (their
// effects count).
#pragma once

#include "ir/program.hpp"

namespace rune::ir {

Program eliminate_dead_code(const Program& program);

}  // namespace rune::ir
