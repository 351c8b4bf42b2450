// The pass pipeline: straight lines of named stages, each followed by the
// verifier in builds with assertions and when RUNE_VERIFY=1 (the test suite
// sets it); RUNE_LOG_PASSES=1 prints the program after each stage on stderr.
#pragma once

#include "ir/passes/scalarize.hpp"
#include "ir/program.hpp"

namespace rune::ir {

// Constant folding, CSE, DCE: the program a compiled function's calls on
// traced values evaluate (a derivative through it differentiates the
// loops as traced, so its bits are those of the function's own).
Program simplify(const Program& program);
// Then small tensors split into scalars, loop-invariant hoisting (and CSE,
// DCE after them), small values ordered first for the VM's kernels: the
// program a compiled function runs, and its `program()`.
Program simplify_loops(const Program& simplified, std::int64_t scalar_elements = default_scalar_elements);

}  // namespace rune::ir
