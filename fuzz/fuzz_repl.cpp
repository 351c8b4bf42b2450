// libFuzzer target: the REPL's command reader. Each input is a sequence of
// command lines, read by a Session (tools/repl/session.hpp) after it has
// loaded tests/repl/cumulative.rune. A crash, a sanitizer report or an
// "internal error" (an exception other than std::invalid_argument, which
// the session prints as such) is a finding.
//
// The file system is not fuzzed: `load NAME` runs only for NAME one of the
// REPL tests' programs below (in tests/repl, RUNE_REPL_PROGRAMS) and is
// skipped otherwise, and a line that may read an argument file (any line
// holding "file") is skipped, so an input cannot read /dev/zero or a huge
// file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "tools/repl/line_source.hpp"
#include "tools/repl/session.hpp"

namespace {

const std::filesystem::path programs = RUNE_REPL_PROGRAMS;

// The programs `load` accepts: tests/repl/*.rune but step_too_short.rune,
// whose internal error is known (the parser's scan rule, being fixed).
const std::set<std::string> loadable = {"branches.rune", "constants.rune", "cumulative.rune", "empty.rune",
                                        "halve.rune",    "malformed.rune", "named.rune",      "named_root.rune",
                                        "nested.rune",   "select.rune",    "straight.rune",   "undefined.rune",
                                        "zero_rows.rune"};

// The input's lines as the session reads them (echoed, as in a transcript),
// with `load NAME` pointed at the programs' folder or made a comment, and
// lines that may read an argument file made comments.
class FuzzLines final : public rune::repl::LineSource {
 public:
  FuzzLines(std::istream& in, std::ostream& echo) : lines_(in, echo) {}

  std::optional<std::string> read_line(const std::string& prompt) override {
    std::optional<std::string> line = lines_.read_line(prompt);
    if (!line) return line;
    std::istringstream words(*line);
    std::string command, name, more;
    words >> command >> name;
    if (command != "load")
      return line->find("file") == std::string::npos ? line : "# (an argument file the fuzz target skips)";
    if (loadable.count(name) && !(words >> more)) return "load " + (programs / name).string();
    return "# (a load the fuzz target skips)";
  }

 private:
  rune::repl::StreamLines lines_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::ostringstream out;
  rune::repl::Session session(out);
  session.execute("load " + (programs / "cumulative.rune").string());
  FuzzLines lines(in, out);
  session.run(lines);
  // (at a line's start: the echoed commands may hold the words too)
  if (("\n" + out.str()).find("\ninternal error: ") != std::string::npos) {
    std::fprintf(stderr, "%s", out.str().c_str());
    std::abort();
  }
  return 0;
}
