// The executable memory of the machine-code tier: one asmjit runtime for
// the process, dual-mapped (no page is writable and executable at once),
// probed on first use.
#pragma once

#include <string>

#include <asmjit/core.h>

namespace rune::vm::native {

// The environment code is emitted for.
const asmjit::Environment& environment();
// Copies `code` into executable memory: its entry, or null (`why` says why:
// the system refused the memory, or the probe at start-up failed).
void* publish(asmjit::CodeHolder& code, const char*& why);
// Gives back what publish returned.
void unpublish(void* entry);

// The first error an Assembler met (an instruction it could not encode,
// which it then leaves out): such code is never published.
class FirstError : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error e, const char*, asmjit::BaseEmitter*) override {
    if (error == asmjit::kErrorOk) error = e;
  }
  asmjit::Error error = asmjit::kErrorOk;
};

// The code `emit(assembler)` writes with an Assembler of this machine
// (asmjit::x86::Assembler, asmjit::a64::Assembler), published (null: `why`
// says why).
template <class Assembler, class Emit> void* assemble(Emit emit, const char*& why) {
  asmjit::CodeHolder code;
  FirstError errors;
  code.init(environment());
  code.setErrorHandler(&errors);
  Assembler as(&code);
  emit(as);
  if (errors.error != asmjit::kErrorOk) {
    why = asmjit::DebugUtils::errorAsString(errors.error);
    return nullptr;
  }
  return publish(code, why);
}

// An emitted loop's assembly as listings show it: the address a call-out
// loads (which changes from run to run) written `<row loop>` (the comment
// above names it). (x86-64: `mov rax, <address>` before `call rax`; AArch64:
// the `movz`/`movk` of x16 before `blr x16`, and a condition's name where
// asmjit writes its number)
std::string readable(const std::string& assembly);

// The assembly `emit(assembler)` writes, as listings show it.
template <class Assembler, class Emit> std::string assembly(Emit emit) {
  asmjit::StringLogger logger;
  asmjit::CodeHolder code;
  code.init(environment());
  code.setLogger(&logger);
  Assembler as(&code);
  emit(as);
  return readable(logger.data());
}

}  // namespace rune::vm::native
