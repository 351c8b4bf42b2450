// The executable memory of the machine-code tier: one asmjit runtime for
// the process, dual-mapped (no page is writable and executable at once),
// probed on first use.
#pragma once

#include <string>

#include <asmjit/x86.h>

namespace rune::vm::native {

// The environment code is emitted for.
const asmjit::Environment& environment();
// Copies `code` into executable memory: its entry, or null (`why` says why:
// the system refused the memory, or the probe at start-up failed).
void* publish(asmjit::CodeHolder& code, const char*& why);
// Gives back what publish returned.
void unpublish(void* entry);

// The code `emit(assembler)` writes, published (null: `why` says why).
template <class Emit> void* assemble(Emit emit, const char*& why) {
  asmjit::CodeHolder code;
  code.init(environment());
  asmjit::x86::Assembler as(&code);
  emit(as);
  return publish(code, why);
}

// An emitted loop's assembly as listings show it: the address a call-out
// loads (which changes from run to run) written `<row loop>` (the comment
// above names it).
std::string readable(const std::string& assembly);

// The assembly `emit(assembler)` writes, as listings show it.
template <class Emit> std::string assembly(Emit emit) {
  asmjit::StringLogger logger;
  asmjit::CodeHolder code;
  code.init(environment());
  code.setLogger(&logger);
  asmjit::x86::Assembler as(&code);
  emit(as);
  return readable(logger.data());
}

}  // namespace rune::vm::native
