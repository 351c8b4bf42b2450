// rune-repl: a debugger for program files, driven from the terminal.
//
//   rune-repl [FILE]
//
// On a terminal, lines are read through readline (editing, history). The
// history is kept in $RUNE_REPL_HISTORY, or ~/.rune_history when that is
// not set (set empty: none kept), each line appended as it is typed, the
// last 1000 kept. When stdin is not a terminal, commands are read from it
// line by line and each is echoed after the prompt, so the output is a
// readable transcript (the tests in tests/repl compare such transcripts);
// no history is kept then, so a script fed to the REPL leaves none.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <readline/history.h>
#include <readline/readline.h>

#include "tools/repl/session.hpp"

namespace {

constexpr int history_kept = 1000;

// The history file's name ("" for none).
std::string history_file() {
  if (const char* set = std::getenv("RUNE_REPL_HISTORY")) return set;
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.rune_history" : "";
}

class TerminalLines final : public rune::repl::LineSource {
 public:
  // Recalls the lines of `history` (a file; "" for none), to which it
  // appends those read.
  explicit TerminalLines(std::string history) : history_(std::move(history)) {
    if (history_.empty()) return;
    int error = read_history(history_.c_str());
    // (a first session: the file is made, so that lines can be appended)
    if (error == ENOENT) error = write_history(history_.c_str());
    if (error == 0) error = history_truncate_file(history_.c_str(), history_kept);
    if (error != 0) {
      std::cerr << "rune-repl: no history kept: " << history_ << ": " << std::strerror(error) << '\n';
      history_.clear();
    }
  }

  std::optional<std::string> read_line(const std::string& prompt) override {
    char* raw = readline(prompt.c_str());
    if (!raw) {
      std::cout << '\n';  // (end the prompt's line at Ctrl-D)
      return std::nullopt;
    }
    std::string line(raw);
    std::free(raw);
    if (line.find_first_not_of(" \t") != std::string::npos) {
      add_history(line.c_str());
      if (!history_.empty()) append_history(1, history_.c_str());
    }
    return line;
  }

 private:
  std::string history_;
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
    TerminalLines lines(history_file());
    session.run(lines);
  } else {
    rune::repl::StreamLines lines(std::cin, std::cout);
    session.run(lines);
  }
  return 0;
}
