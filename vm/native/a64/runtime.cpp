// The executable memory of AArch64: each loop in pages of its own, written
// while they are writable and then made executable (mprotect), its
// instruction cache lines cleared; no page is writable and executable at
// once. Not asmjit's dual mapping, as on x86-64: the code's bytes written
// through a second mapping are not seen by qemu-user, which goes on running
// what it translated from the page before (the first loop freed at an
// address and the next published there ran the old code), and the test
// suite runs this emitter under qemu (docs/platforms.md). Probed on first
// use by publishing a function that returns at once and calling it.
#include "vm/native/runtime.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <asmjit/arm/a64assembler.h>  // (Debian's asmjit ships no asmjit/a64.h)

namespace rune::vm::native {

namespace {

// A loop's pages begin with their length; the code follows.
constexpr std::size_t header = 16;

void* map_code(asmjit::CodeHolder& code, const char*& why) {
  if (code.flatten() != asmjit::kErrorOk || code.resolveUnresolvedLinks() != asmjit::kErrorOk) {
    why = "the code could not be laid out";
    return nullptr;
  }
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = (header + code.codeSize() + page - 1) / page * page;
  void* pages = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) {
    why = "the system refused memory for code";
    return nullptr;
  }
  char* entry = static_cast<char*>(pages) + header;
  *static_cast<std::size_t*>(pages) = bytes;
  code.relocateToBase(std::uint64_t(reinterpret_cast<std::uintptr_t>(entry)));
  code.copyFlattenedData(entry, code.codeSize(), asmjit::CopySectionFlags::kPadTargetBuffer);
  if (mprotect(pages, bytes, PROT_READ | PROT_EXEC) != 0) {
    munmap(pages, bytes);
    why = "the system refused executable memory";
    return nullptr;
  }
  __builtin___clear_cache(entry, entry + code.codeSize());
  return entry;
}

void unmap_code(void* entry) {
  void* pages = static_cast<char*>(entry) - header;
  munmap(pages, *static_cast<std::size_t*>(pages));
}

// Null, or why this process cannot run code it writes.
const char* probe() {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment::host());
  asmjit::a64::Assembler as(&code);
  as.ret(asmjit::a64::x30);
  const char* why = nullptr;
  void* entry = map_code(code, why);
  if (!entry) return why;
  reinterpret_cast<void (*)()>(entry)();
  unmap_code(entry);
  return nullptr;
}

}  // namespace

const asmjit::Environment& environment() {
  static const asmjit::Environment host = asmjit::Environment::host();
  return host;
}

void* publish(asmjit::CodeHolder& code, const char*& why) {
  static const char* const refusal = probe();
  if (refusal) {
    why = refusal;
    return nullptr;
  }
  return map_code(code, why);
}

void unpublish(void* entry) { unmap_code(entry); }

}  // namespace rune::vm::native
