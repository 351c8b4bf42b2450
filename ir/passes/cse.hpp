// Common-subexpression elimination: an equation equal to an earlier one
// (same operation, parameters and inputs; constants bit for bit) is removed
// and its outputs replaced by the earlier one's, in the program and its
// sub-programs.
#pragma once

#include "ir/program.hpp"

namespace rune::ir {

Program eliminate_common_subexpressions(const Program& program);

}  // namespace rune::ir
