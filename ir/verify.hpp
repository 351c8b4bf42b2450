// The verifier: checks that a program is well formed and well typed. Run
// after every pass in debug and test builds (ir/passes/pipeline.hpp).
#pragma once

#include "ir/program.hpp"

namespace rune::ir {

// Throws std::logic_error naming the bad equation, its reason, and the
// program's text, unless: every value is defined once before it is used,
// every primitive's output has the type its rule gives, every construct's
// outputs the types it gives, and the same holds in every sub-program.
void verify(const Program& program);

// Whether programs and compiled codes are verified: in builds with
// assertions, and when RUNE_VERIFY=1 (the test suite sets it).
bool verifying();

}  // namespace rune::ir
