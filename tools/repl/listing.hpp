// The lines of the program text that define each value, so the debugger can
// show where it stopped in the words of `list`.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rune::repl {

class Listing {
 public:
  // `text` is the printed program (rune::to_string).
  explicit Listing(const std::string& text);
  // The line defining %number, without its indentation: an equation's line
  // (and its `with` line), or the `program (...)` line of a parameter.
  // Empty when the text has no such value.
  std::vector<std::string> definition(int number) const;

 private:
  std::vector<std::string> lines_;   // unindented
  std::map<int, std::size_t> where_;  // number -> line
};

}  // namespace rune::repl
