#include "tools/repl/breakpoints.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "ir/construct.hpp"

namespace rune::repl {

namespace {

// The words runs are labelled with (constructs/scan.cpp, iterate.cpp).
const std::set<std::string> run_words = {"row", "until", "step"};

// How a loop labels the runs of one of its sub-programs: "row 0" to
// "row N-1" for a scan of N rows; "until 0" to "until N" and "step 0" to
// "step N-1" for an iterate of at most N steps. None for a sub-program run
// once (a cond's branch, a remat's body) or the program itself.
struct Runs {
  std::string word;
  std::int64_t count = 0;
};
std::optional<Runs> runs_of(const Names::Owner& owner) {
  if (!owner.equation) return std::nullopt;
  const ir::Equation& eq = *owner.equation;
  if (eq.kind == ir::OpKind::scan) return Runs{"row", ir::construct_rules(eq.kind).count(eq)};
  if (eq.kind == ir::OpKind::iterate) {
    const std::int64_t max = ir::construct_rules(eq.kind).count(eq);
    return owner.part == "until" ? Runs{"until", max + 1} : Runs{"step", max};
  }
  return std::nullopt;
}

std::int64_t run_index(const std::string& run) { return std::stoll(run.substr(run.find(' ') + 1)); }

}  // namespace

std::string breakpoint_text(const Breakpoint& b) {
  return b.run.empty() ? name_text(b.number) : name_text(b.number) + " (" + b.run + ")";
}

std::vector<Breakpoint> parse_breakpoints(const std::vector<std::string>& words) {
  std::vector<Breakpoint> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    Breakpoint b{parse_name(words[i]), ""};
    if (i + 1 < words.size() && run_words.count(words[i + 1])) {
      const std::string& word = words[++i];
      const std::string count = i + 1 < words.size() ? words[++i] : "";
      std::int64_t k = -1;
      auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), k);
      if (count.empty() || error != std::errc() || end != count.data() + count.size() || k < 0)
        throw std::invalid_argument(word + " takes a count from 0, such as " + word + " 3");
      b.run = word + " " + std::to_string(k);
    }
    out.push_back(b);
  }
  return out;
}

void check_run(const Breakpoint& b, const Names& names) {
  if (b.run.empty()) return;
  const Names::Owner& owner = names.owner_of(*names.find(b.number)->program);
  const std::string value = name_text(b.number);
  const std::optional<Runs> runs = runs_of(owner);
  if (!runs)
    throw std::invalid_argument(value + " is in no loop" + (owner.equation ? " (" + owner.text() + " runs once)" : "") +
                                ": break " + value + " alone stops at it");
  const std::string word = b.run.substr(0, b.run.find(' '));
  if (word != runs->word)
    throw std::invalid_argument(value + " is in " + owner.text() + ", whose runs are " + runs->word + " 0, " +
                                runs->word + " 1, ...");
  if (run_index(b.run) >= runs->count)
    throw std::invalid_argument(owner.text() + (runs->count == 0 ? " never runs"
                                                                   : " runs " + runs->word + " 0 to " + runs->word +
                                                                         " " + std::to_string(runs->count - 1)) +
                                ": " + b.run + " never comes");
}

bool Breakpoints::remove(const Breakpoint& b) {
  if (!b.run.empty()) return set_.erase(b) > 0;
  return std::erase_if(set_, [&](const Breakpoint& at) { return at.number == b.number; }) > 0;
}

const Breakpoint* Breakpoints::stopping(const std::vector<Stepper::Defined>& defines) const {
  for (const Stepper::Defined& d : defines)
    for (const Breakpoint& b : {Breakpoint{d.number, ""}, Breakpoint{d.number, d.run}})
      if (auto it = set_.find(b); it != set_.end()) return &*it;
  return nullptr;
}

std::string Breakpoints::text() const {
  std::string s;
  for (const Breakpoint& b : set_) {
    if (!s.empty()) s += ' ';
    s += breakpoint_text(b);
  }
  return s;
}

}  // namespace rune::repl
