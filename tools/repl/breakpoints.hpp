// The debugger's breakpoints. A breakpoint stops a run before the action
// that defines its value: on every run of the value's sub-program, or,
// with a run given ("break %7 row 150"), only in that run of the loop
// the value is in, as the stepper labels its runs: a scan's "row k", an
// iterate's "until k" and "step k".
#pragma once

#include <compare>
#include <set>
#include <string>
#include <vector>

#include "tools/repl/names.hpp"
#include "tools/repl/stepper.hpp"

namespace rune::repl {

struct Breakpoint {
  int number = -1;
  std::string run;  // the one run it stops in ("row 150"); "" for every run
  auto operator<=>(const Breakpoint&) const = default;
};

// "%7", or "%7 (row 150)".
std::string breakpoint_text(const Breakpoint& b);

// The words of a list of breakpoints as `break` and `delete` take them:
// value names, each followed by the run it stops in, if only one:
// "%7 row 150 %9 %12".
// Throws std::invalid_argument for a word that is not a value name or a
// run not written WORD K.
std::vector<Breakpoint> parse_breakpoints(const std::vector<std::string>& words);

// Throws std::invalid_argument unless the value's loop has the breakpoint's
// run (for a breakpoint with one): not for a value outside any loop, nor
// "step 3" in a scan's step, nor row 150 of a scan of 100 rows.
void check_run(const Breakpoint& b, const Names& names);

class Breakpoints {
 public:
  bool empty() const { return set_.empty(); }
  void add(const Breakpoint& b) { set_.insert(b); }
  // Removes the breakpoint; one without a run removes every breakpoint at
  // its value. Returns whether any was removed.
  bool remove(const Breakpoint& b);
  void clear() { set_.clear(); }
  // The breakpoint that stops before an action defining `defines`, if any.
  const Breakpoint* stopping(const std::vector<Stepper::Defined>& defines) const;
  // "%7 (row 150) %16": each, in the order of their values.
  std::string text() const;

 private:
  std::set<Breakpoint> set_;
};

}  // namespace rune::repl
