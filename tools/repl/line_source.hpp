// Where the debugger's command lines come from: the terminal (readline, in
// main.cpp) or any stream, e.g. a test's session file.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace rune::repl {

class LineSource {
 public:
  virtual ~LineSource() = default;
  // The next line, or nullopt at the end of the input.
  virtual std::optional<std::string> read_line(const std::string& prompt) = 0;
};

// Lines from a stream. Each line read is echoed after the prompt to `echo`,
// so the output reads as a terminal session would (a transcript).
class StreamLines final : public LineSource {
 public:
  StreamLines(std::istream& in, std::ostream& echo) : in_(in), echo_(echo) {}
  std::optional<std::string> read_line(const std::string& prompt) override;

 private:
  std::istream& in_;
  std::ostream& echo_;
};

}  // namespace rune::repl
