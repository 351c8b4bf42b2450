// The %n names of a program's values, numbered exactly as the program text
// numbers them (ir::number_values), so what the debugger shows matches what
// `list` prints.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/text.hpp"

namespace rune::repl {

class Names {
 public:
  // Where a named value lives: value `value` of `program` (the program or
  // one of its sub-programs).
  struct Place {
    const ir::Program* program = nullptr;
    int value = -1;
  };

  explicit Names(const ir::Program& program);

  int number(const ir::Program& program, int value) const { return numbers_.at(&program)[std::size_t(value)]; }
  std::vector<int> numbers(const ir::Program& program, const std::vector<int>& values) const;
  // The value named %number, if the text shows one.
  std::optional<Place> find(int number) const;
  // The number of names: they run from %0 to %(count - 1).
  int count() const { return int(places_.size()); }
  // The first output of the scan whose step `program` is; -1 for the
  // top-level program (a step is named after its scan: "the step of %2").
  int scan_of(const ir::Program& program) const;

 private:
  void index(const ir::Program& program, int scan);

  ir::ValueNumbers numbers_;
  std::vector<Place> places_;                // by number
  std::map<const ir::Program*, int> scans_;  // each program's scan (see scan_of)
};

// "%7" for 7.
std::string name_text(int number);
// Reads a value name: "%7" or "7"; throws std::invalid_argument otherwise.
int parse_name(const std::string& word);

}  // namespace rune::repl
