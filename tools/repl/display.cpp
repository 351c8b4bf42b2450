#include "tools/repl/display.hpp"

#include <ostream>

#include "rune/nx.hpp"

namespace rune::repl {

std::string value_text(const Produced& p) {
  std::string s = name_text(p.number) + " = " + nx::to_string(p.value);
  if (!p.where.empty()) s += "   (" + p.where + ")";
  return s;
}

void show_results(std::ostream& out, const std::vector<Produced>& results, std::span<const std::string> paths) {
  if (results.empty()) out << "return (no values)\n";  // (a finished run always says so)
  for (std::size_t k = 0; k < results.size(); ++k) {
    // (a root path "" is a lone result: its %n says more than "the root")
    const bool named = k < paths.size() && !paths[k].empty();
    out << "return " << (named ? paths[k] + " = " + nx::to_string(results[k].value) : value_text(results[k])) << '\n';
  }
}

namespace {

// What the next action is about, as the first line says it.
std::string subject(const Stepper::Next& next) {
  std::string in = next.where.empty() ? "" : " (" + next.where + ")";
  const std::string shown = next.shown >= 0 ? name_text(next.shown) : "a value the text does not show";
  switch (next.kind) {
    case Stepper::Kind::equation: return "before " + shown + in;
    case Stepper::Kind::enter: return "before " + std::string(next.construct) + " " + shown + in;
    case Stepper::Kind::next_run: return "before " + next.where;
    case Stepper::Kind::leave: return "before the end of " + std::string(next.construct) + " " + shown + in;
    case Stepper::Kind::done: break;
  }
  return "the program has finished";
}

}  // namespace

void show_next(std::ostream& out, const Stepper::Next& next, const Listing& listing) {
  out << subject(next) << '\n';
  if (next.kind == Stepper::Kind::leave || next.kind == Stepper::Kind::done || next.shown < 0) return;
  for (const std::string& line : listing.definition(next.shown)) out << "  " << line << '\n';
}

}  // namespace rune::repl
