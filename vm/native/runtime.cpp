// One dual-mapped asmjit runtime, probed by publishing a function that
// returns at once and calling it.
#include "vm/native/runtime.hpp"

#include <mutex>

#if defined(__aarch64__)
#include <asmjit/arm.h>
#else
#include <asmjit/x86.h>
#endif

#include "vm/native/native.hpp"

namespace rune::vm::native {

namespace {

struct Runtime {
  Runtime() : jit(&params()) {
    asmjit::CodeHolder code;
    code.init(jit.environment());
#if defined(__aarch64__)
    asmjit::a64::Assembler as(&code);
    as.ret(asmjit::a64::x30);
#else
    asmjit::x86::Assembler as(&code);
    as.ret();
#endif
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

bool built() { return true; }

void release(const void* loop) { unpublish(const_cast<void*>(loop)); }

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

std::string readable(const std::string& assembly) {
  std::string out;
  std::size_t at = 0;
  while (at < assembly.size()) {
    std::size_t end = assembly.find('\n', at);
    if (end == std::string::npos) end = assembly.size();
    std::string line = assembly.substr(at, end - at);
    const bool calls = assembly.compare(end + 1, 8, "call rax") == 0;
    if (calls && line.rfind("mov rax, ", 0) == 0) line = "mov rax, <row loop>";
    // (AArch64: the address built in x16 by a movz and three movk)
    if (line.rfind("movz x16, ", 0) == 0) line = "movz x16, <row loop>";
    if (line.rfind("movk x16, ", 0) == 0) {
      at = end + 1;
      continue;
    }
    out += line + "\n";
    at = end + 1;
  }
  return out;
}

void unpublish(void* entry) {
  Runtime& r = runtime();
  std::lock_guard<std::mutex> hold(r.lock);
  r.jit.release(entry);
}

}  // namespace rune::vm::native
