// The executable memory of x86-64: one dual-mapped asmjit runtime (no page
// writable and executable at once), probed by publishing a function that
// returns at once and calling it.
#include "vm/native/runtime.hpp"

#include <mutex>

#include <asmjit/x86.h>

namespace rune::vm::native {

namespace {

struct Runtime {
  Runtime() : jit(&params()) {
    asmjit::CodeHolder code;
    code.init(jit.environment());
    asmjit::x86::Assembler as(&code);
    as.ret();
    void (*probe)() = nullptr;
    if (jit.add(&probe, &code) != asmjit::kErrorOk) {
      refusal = "the system refused dual-mapped executable memory";
      return;
    }
    probe();
    jit.release(probe);
    usable = true;
  }
  static const asmjit::JitAllocator::CreateParams& params() {
    static asmjit::JitAllocator::CreateParams p = [] {
      asmjit::JitAllocator::CreateParams q{};
      q.options = asmjit::JitAllocatorOptions::kUseDualMapping;
      return q;
    }();
    return p;
  }
  asmjit::JitRuntime jit;
  std::mutex lock;  // (publishing is rare; one at a time)
  bool usable = false;
  const char* refusal = nullptr;
};

// (never destroyed: a unit freed by a static destructor may still give its
// code back)
Runtime& runtime() {
  static Runtime* r = new Runtime;
  return *r;
}

}  // namespace

const asmjit::Environment& environment() { return runtime().jit.environment(); }

void* publish(asmjit::CodeHolder& code, const char*& why) {
  Runtime& r = runtime();
  if (!r.usable) {
    why = r.refusal;
    return nullptr;
  }
  std::lock_guard<std::mutex> hold(r.lock);
  void* entry = nullptr;
  if (const asmjit::Error e = r.jit.add(&entry, &code); e != asmjit::kErrorOk) {
    why = asmjit::DebugUtils::errorAsString(e);
    return nullptr;
  }
  return entry;
}

void unpublish(void* entry) {
  Runtime& r = runtime();
  std::lock_guard<std::mutex> hold(r.lock);
  r.jit.release(entry);
}

}  // namespace rune::vm::native
