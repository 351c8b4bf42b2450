// Renumbers a program's values in order of definition (parameters, then
// each equation's outputs) and drops the types of values no longer defined:
// the numbering the printer shows and the parser builds. Passes end with it.
#pragma once

#include "ir/program.hpp"

namespace rune::ir {

Program canonical(const Program& program);

}  // namespace rune::ir
