// The verifier of a code: every instruction's side-table index in range,
// every register it reads or writes in range, every register read written
// before (by a parameter, a constant or an earlier instruction), every
// result written; sub-codes (a scan's step, a construct's codes) the same.
// Throws std::logic_error naming the instruction. `vm::compile` runs it in
// builds with assertions and when RUNE_VERIFY=1 (ir::verifying).
#pragma once

#include "vm/code.hpp"

namespace rune::vm {

void verify(const Code& code);

}  // namespace rune::vm
