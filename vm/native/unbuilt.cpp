// A build without the machine-code tier (meson -Dnative=disabled, or no
// asmjit): nothing is emitted and every unit runs on the VM.
#include "vm/native/native.hpp"

namespace rune::vm::native {

bool built() { return false; }

const char* scan_refusal(const ScanOp&, const Instruction*& culprit) {
  culprit = nullptr;
  return "this build has no machine-code tier (meson -Dnative)";
}

ScanLoop emit_scan(const ScanOp&, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  why = "this build has no machine-code tier (meson -Dnative)";
  return nullptr;
}

void release(ScanLoop) {}

std::string scan_listing(const ScanOp&) { return ""; }

}  // namespace rune::vm::native
