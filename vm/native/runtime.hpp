// The executable memory of the machine-code tier: one asmjit runtime for
// the process, dual-mapped (no page is writable and executable at once),
// probed on first use.
#pragma once

#include <asmjit/core.h>

namespace rune::vm::native {

// The environment code is emitted for.
const asmjit::Environment& environment();
// Copies `code` into executable memory: its entry, or null (`why` says why:
// the system refused the memory, or the probe at start-up failed).
void* publish(asmjit::CodeHolder& code, const char*& why);
// Gives back what publish returned.
void unpublish(void* entry);

}  // namespace rune::vm::native
