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
  // What runs a sub-program: the first output of its construct (-1 for the
  // top-level program, or a construct without outputs), its part ("step",
  // "until", "branch"): a sub-program is named "the step of %2"; and the
  // construct's equation (null for the top-level program).
  struct Owner {
    int construct = -1;
    std::string part;
    const ir::Equation* equation = nullptr;
    std::string text() const;  // "the step of %2"
  };
  const Owner& owner_of(const ir::Program& program) const { return owners_.at(&program); }

 private:
  void index(const ir::Program& program, Owner owner);

  ir::ValueNumbers numbers_;
  std::vector<Place> places_;                   // by number
  std::map<const ir::Program*, Owner> owners_;  // each program's (see owner_of)
};

// "%7" for 7.
std::string name_text(int number);
// Reads a value name: "%7" or "7"; throws std::invalid_argument otherwise.
int parse_name(const std::string& word);

}  // namespace rune::repl
