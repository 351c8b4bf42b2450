// How the debugger shows values and where a run stands.
//
//   %6 = float64 [] 1   (row 0 of %2)       a value a step defined
//   return %3 = float64 [4] [1, 5, 14, 30]  a result of the finished program
//   return position = float64 [3] [1, 2, 3]  the same, by its path
//   before %7 (row 1 of %2)                 the next action, with the line
//     %7 : float64 [] at CPU = Map [...]    of the text that defines it
#pragma once

#include <iosfwd>
#include <span>
#include <string>

#include "tools/repl/listing.hpp"
#include "tools/repl/stepper.hpp"

namespace rune::repl {

// "%6 = float64 [] 1", then "   (row 0 of %2)" inside a scan's step.
std::string value_text(const Produced& p);

// The program's results, one "return %n = ..." line each ("return (no values)"
// for none); a result with a path in `paths` (a program saved with names)
// shows that instead: "return position = ...".
void show_results(std::ostream& out, const std::vector<Produced>& results, std::span<const std::string> paths);

// The next action: "before %7 (row 1 of %2)", "before scan %2",
// "before row 1 of %2" (binding the step's parameters), "before the end of
// scan %2" (stacking its outputs) or "the program has finished", followed by
// the lines of the text that define what it computes, indented.
void show_next(std::ostream& out, const Stepper::Next& next, const Listing& listing);

}  // namespace rune::repl
