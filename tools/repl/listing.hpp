// The program text as the debugger lists it, and the lines that define
// each value, so the debugger can show where it stopped in the words of
// `list`. A constant's line ends with its value in decimal beside the
// exact bits the text gives:
//
//   %3 : float64 [] at CPU = Map [float64:0x3ff0000000000000] at CPU  ; 1
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/repl/names.hpp"

namespace rune::repl {

class Listing {
 public:
  // `text` is `program` printed (rune::to_string); `names` numbers its
  // values.
  Listing(const std::string& text, const ir::Program& program, const Names& names);
  // The whole listing: the text, a value after each constant's line; a
  // constant of more than `shown_elements` elements is elided (`print` shows
  // it).
  std::string text() const;
  static constexpr std::int64_t shown_elements = 8;
  // The line defining %number, without its indentation: an equation's line
  // (and its `with` line), or the `program (...)` line of a parameter.
  // Empty when the text has no such value.
  std::vector<std::string> definition(int number) const;

 private:
  std::vector<std::string> lines_;    // as listed, indented
  std::map<int, std::size_t> where_;  // number -> line
};

}  // namespace rune::repl
