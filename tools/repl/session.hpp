// The debugger's commands: one Session holds the loaded program, the
// breakpoints, the run and the bytecode run, and executes command lines,
// writing what they show to a stream. A failing command prints its error
// and changes nothing; no input ends the session but `quit` or the end of
// the input. A user's error (std::invalid_argument) prints its message;
// any other exception is a bug and prints as "internal error: ...".
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "tools/repl/breakpoints.hpp"
#include "tools/repl/bytecode_run.hpp"
#include "tools/repl/line_source.hpp"
#include "tools/repl/listing.hpp"
#include "tools/repl/stepper.hpp"

namespace rune::repl {

class Session {
 public:
  static constexpr const char* prompt = "(rune) ";

  explicit Session(std::ostream& out);
  ~Session();

  // Executes one command line (blank lines and `# comments` do nothing).
  void execute(const std::string& line);
  // Reads and executes lines until `quit` or the end of the input.
  void run(LineSource& in);
  bool quitting() const { return quitting_; }

 private:
  struct Command;
  static const std::vector<Command>& commands();
  static const Command* find_command(const std::string& name);

  // The commands, one per function; `args` is the rest of the line.
  void help(const std::string& args);
  void load(const std::string& args);
  void list(const std::string& args);
  void run_command(const std::string& args);
  void start(const std::string& args);
  void step(const std::string& args);
  void bytecode(const std::string& args);
  void stepi(const std::string& args);
  void nexti(const std::string& args);
  void run_instructions(const std::string& command, const std::string& args, bool over);
  void native(const std::string& args);
  void profile(const std::string& args);
  void continue_command(const std::string& args);
  void break_command(const std::string& args);
  void stats(const std::string& args);
  void delete_command(const std::string& args);
  void print(const std::string& args);
  void where(const std::string& args);
  void reset(const std::string& args);
  void quit(const std::string& args);

  std::ostream& out_;
  std::shared_ptr<const ir::Program> program_;
  // The paths of its parameters and results (none for a program saved
  // without names).
  std::vector<std::string> param_paths_, result_paths_;
  std::unique_ptr<Names> names_;
  std::unique_ptr<Listing> listing_;
  Breakpoints breakpoints_;
  bool break_on_nan_ = false;  // break nan: stop after the first value holding a NaN or an infinity
  std::unique_ptr<Stepper> run_;
  // The bytecode: compiled on first use; its run (stepi) takes the
  // arguments of run_, and ends when a program is loaded or a run begins
  // (run, start, reset).
  std::shared_ptr<const vm::Code> code_;
  std::unique_ptr<BytecodeRun> bytecode_run_;
  bool quitting_ = false;

  void require_program() const;
  Stepper& require_running() const;
  Stepper& require_unfinished() const;
  int existing_value(int n) const;
  void begin(const std::string& args);
  void go_on(bool check_first, int stops);
  void list_breakpoints();
  void print_value(int number, const std::string& index) const;
  const std::shared_ptr<const vm::Code>& code();
  std::vector<Produced> program_results(const std::vector<nx::Tensor>& values) const;
};

}  // namespace rune::repl
