// Fused kernels on AArch64: not emitted yet (their packed rows are SSE2
// code, x86/fused_loop.cpp); they run on the VM, which vectorizes them
// with NEON.
#include "vm/native/native.hpp"

namespace rune::vm::native {

namespace {
const char* const unemitted = "fused kernels are emitted for x86-64 only";
}

bool fuses() { return false; }

const char* fused_refusal(const FusedKernel&) { return unemitted; }

const void* emit_fused(const void*, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  why = unemitted;
  return nullptr;
}

std::string fused_listing(const FusedKernel&) { return ""; }

}  // namespace rune::vm::native
