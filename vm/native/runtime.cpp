// What the machines' runtimes share (x86/runtime.cpp, a64/runtime.cpp):
// the build's answer, freeing a unit's loop, and listings made readable.
#include "vm/native/runtime.hpp"

#include "vm/native/native.hpp"

namespace rune::vm::native {

bool built() { return true; }

void release(const void* loop) { unpublish(const_cast<void*>(loop)); }

namespace {

// asmjit's logger writes an AArch64 condition operand (of cset, fcsel) as
// its number in asmjit's CondCode: the line with the condition's name.
std::string named_condition(const std::string& line) {
  static const char* const names[] = {"al", "nv", "eq", "ne", "hs", "lo", "mi", "pl",
                                      "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le"};
  if (line.find("cset ") == std::string::npos && line.find("fcsel ") == std::string::npos) return line;
  const std::size_t comma = line.rfind(", ");
  if (comma == std::string::npos || comma + 2 == line.size() ||
      line.find_first_not_of("0123456789", comma + 2) != std::string::npos)
    return line;
  const int code = std::stoi(line.substr(comma + 2));
  return code < 16 ? line.substr(0, comma + 2) + names[code] : line;
}

}  // namespace

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
    out += named_condition(line) + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace rune::vm::native
