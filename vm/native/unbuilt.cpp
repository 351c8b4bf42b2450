// A build without the machine-code tier (meson -Dnative=disabled, or no
// asmjit): nothing is emitted and every unit runs on the VM.
#include "vm/native/native.hpp"

namespace rune::vm::native {

bool built() { return false; }
bool fuses() { return false; }

namespace {
const char* const unbuilt = "this build has no machine-code tier (meson -Dnative)";
}

const char* scan_refusal(const ScanOp&, const Instruction*& culprit) {
  culprit = nullptr;
  return unbuilt;
}

const char* iterate_refusal(const Invoke&, const Instruction*& culprit) {
  culprit = nullptr;
  return unbuilt;
}

const char* fused_refusal(const FusedKernel&) { return unbuilt; }

const void* emit_scan(const void*, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  why = unbuilt;
  return nullptr;
}

const void* emit_iterate(const void*, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  why = unbuilt;
  return nullptr;
}

const void* emit_fused(const void*, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  why = unbuilt;
  return nullptr;
}

std::string scan_listing(const ScanOp&) { return ""; }
std::string fused_listing(const FusedKernel&) { return ""; }
std::string iterate_listing(const Invoke&) { return ""; }

void release(const void*) {}

}  // namespace rune::vm::native
