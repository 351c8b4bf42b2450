// rune-repl: a debugger for program files, driven from the terminal.
//
//   rune-repl [FILE]
//
// On a terminal, lines are read through readline (editing, history). When
// stdin is not a terminal, commands are read from it line by line and each
// is echoed after the prompt, so the output is a readable transcript (the
// tests in tests/repl compare such transcripts).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <readline/history.h>
#include <readline/readline.h>

#include "tools/repl/session.hpp"

namespace {

class TerminalLines final : public rune::repl::LineSource {
 public:
  std::optional<std::string> read_line(const std::string& prompt) override {
    char* raw = readline(prompt.c_str());
    if (!raw) {
      std::cout << '\n';  // (end the prompt's line at Ctrl-D)
      return std::nullopt;
    }
    std::string line(raw);
    std::free(raw);
    if (line.find_first_not_of(" \t") != std::string::npos) add_history(line.c_str());
    return line;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && (std::string(argv[1]) == "-h" || std::string(argv[1]) == "--help"))) {
    std::cout << "usage: rune-repl [FILE]\n  a debugger for rune program files; type help inside\n";
    return argc > 2 ? 2 : 0;
  }
  rune::repl::Session session(std::cout);
  if (argc == 2) session.execute("load " + std::string(argv[1]));
  if (isatty(STDIN_FILENO)) {
    TerminalLines lines;
    session.run(lines);
  } else {
    rune::repl::StreamLines lines(std::cin, std::cout);
    session.run(lines);
  }
  return 0;
}
