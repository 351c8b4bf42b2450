// The pass pipeline: a straight line of named stages (constant folding,
// loop-invariant hoisting, CSE, DCE), each followed by the
// verifier in builds with assertions and when RUNE_VERIFY=1 (the test suite
// sets it); RUNE_LOG_PASSES=1 prints the program after each stage on stderr.
#pragma once

#include "ir/program.hpp"

namespace rune::ir {

Program simplify(const Program& program);

}  // namespace rune::ir
