#include "tools/repl/session.hpp"

#include <algorithm>
#include <charconv>
#include <ostream>
#include <sstream>

#include "ir/eval.hpp"
#include "ir/text.hpp"
#include "ops/primitive.hpp"
#include "rune/debug.hpp"
#include "tools/repl/arguments.hpp"
#include "tools/repl/display.hpp"
#include "tools/repl/file_text.hpp"
#include "tools/repl/inspect.hpp"
#include "vm/executables.hpp"
#include "vm/listing.hpp"
#include "vm/machine.hpp"

namespace rune::repl {

struct Session::Command {
  std::vector<std::string> names;  // the name, then its short forms
  std::string usage, summary;
  void (Session::*handler)(const std::string& args);
};

const std::vector<Session::Command>& Session::commands() {
  static const std::vector<Command> table = {
      {{"load"}, "load FILE", "load a program file (the text of rune::save_program)", &Session::load},
      {{"list", "show"}, "list", "print the program", &Session::list},
      {{"run", "r"}, "run ARGS", "start on ARGS and go on to a breakpoint or the end", &Session::run_command},
      {{"start"}, "start ARGS", "start on ARGS, stopped before the first equation", &Session::start},
      {{"step", "s"}, "step [N]", "take one action (or N), showing the values defined", &Session::step},
      {{"bytecode", "bc"}, "bytecode", "print the bytecode the program compiles to", &Session::bytecode},
      {{"stepi", "si"}, "stepi [N]", "run one instruction (or N), showing registers written; into constructs",
       &Session::stepi},
      {{"nexti", "ni"}, "nexti [N]", "the same, a construct run as one instruction", &Session::nexti},
      {{"native"}, "native", "print the machine code of the bytecode's fused kernels, scans and iterates (docs/vm.md)", &Session::native},
      {{"profile"}, "profile [ARGS]", "run the bytecode on ARGS (alone: the run's) and show where its time goes",
       &Session::profile},
      {{"continue", "c"}, "continue [N]", "go on to the next breakpoint (or the Nth) or the end",
       &Session::continue_command},
      {{"break", "b"}, "break [%n [row K] ... | nan]", "stop before the equation defining %n, or after a NaN (alone: list)",
       &Session::break_command},
      {{"delete", "d"}, "delete [%n [row K] ... | nan]", "remove the breakpoints at %n (alone: all)",
       &Session::delete_command},
      {{"print", "p"}, "print [%n[INDEX] ...]", "show each %n's current value, or part (alone: the program)",
       &Session::print},
      {{"stats"}, "stats %n[INDEX] ...", "show each value's min, max, mean and NaN and infinity counts", &Session::stats},
      {{"where"}, "where", "show the next action", &Session::where},
      {{"reset"}, "reset", "restart on the same arguments, stopped at the start", &Session::reset},
      {{"help", "h"}, "help", "this text", &Session::help},
      {{"quit", "q", "exit"}, "quit", "leave (the end of the input leaves too)", &Session::quit},
  };
  return table;
}

namespace {

const char* help_notes =
    "ARGS are tensors written as the printer writes them, or shorthands making\n"
    "one of a type, separated by commas:\n"
    "  run float64 [3] [1, 2, 3], float64 [] 2\n"
    "  zeros float64 [8]    ones int32 [2, 2]    fill 2.5 float64 [3]\n"
    "  linspace 0 1 float64 [5]    file pos.txt float64 [100, 3]\n"
    "A file holds the elements in C order, separated by spaces, commas or line\n"
    "breaks; # starts a comment.\n"
    "Values are named %n as list prints them; a constant's line ends with its\n"
    "value (\"; 1\"). A program saved with names shows its parameters' and\n"
    "results' paths, and its results by path (\"return position = ...\").\n"
    "A step shows each value it defines, and for a value of a sub-program, the\n"
    "run of each construct it is in (innermost first):\n"
    "  %6 = float64 [] 1   (row 0 of %2)\n"
    "Stepping onto a construct enters its sub-programs, one run at a time,\n"
    "binding the run's parameters: a scan's step row by row, an iterate's until\n"
    "and step in turn (\"until 0\", \"step 0\", ...), a cond's chosen branch, a\n"
    "remat's body. After a run's last equation, a step begins the next run;\n"
    "after the last, it defines the construct's outputs. A breakpoint in a\n"
    "sub-program stops on every run; one at its parameter, before each run;\n"
    "one given a run (break %7 row 150; an iterate's until K or step K), in\n"
    "that run only. continue N goes on past N - 1 stops to the Nth. break nan\n"
    "stops after the first action defining a value that holds a NaN or an\n"
    "infinity.\n"
    "print %7[150] and print %7[2:5, 0] show part of a value (K, A:B, A: or :B\n"
    "per leading axis); stats %7 its min, max, mean and NaN and infinity counts.\n"
    "A constant of more than 8 elements is elided from list (print shows it).\n"
    "A finished run shows its results:\n"
    "  return %3 = float64 [4] [1, 5, 14, 30]\n"
    "bytecode lists the program as loaded, compiled for its parameters' types\n"
    "as rune::run compiles it (not simplified first). stepi runs it on the\n"
    "arguments of the last run or start, one instruction at a time, showing\n"
    "each and the registers it wrote (a tensor of more than 8 elements as its\n"
    "first elements and stats). A construct (a scan, an iterate, a cond) runs\n"
    "whole at its stepi; the next ones show what it ran inside, a scan's step\n"
    "row by row, then its own line; nexti runs it as one instruction (inside\n"
    "one being shown: on to its line). At the end it shows the results and\n"
    "the next stepi starts over.\n"
    "Its run is apart from step's; load, run, start and reset end it.\n"
    "native shows the machine code of each fused kernel, scan and iterate of\n"
    "the bytecode that the machine-code tier emits (a scan promoted once it\n"
    "has run 1000 rows, a kernel 131072 elements, or at once with\n"
    "RUNE_NATIVE=eager), or why it stays on the VM.\n";

std::string trimmed(const std::string& s) {
  std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The words of a list such as "%2 %3" or "%2, %3".
std::vector<std::string> words(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> out;
  for (std::string w; in >> w;) {
    while (!w.empty() && w.back() == ',') w.pop_back();
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

void no_arguments(const char* command, const std::string& args) {
  if (!args.empty()) throw std::invalid_argument(std::string(command) + " takes no arguments");
}

// "step 3": a count from 1 of `what` ("steps").
int count_of(const std::string& command, const char* what, const std::string& args) {
  if (args.empty()) return 1;
  int n = 0;
  auto [end, error] = std::from_chars(args.data(), args.data() + args.size(), n);
  if (error != std::errc() || end != args.data() + args.size() || n < 1)
    throw std::invalid_argument(command + " takes a count of " + what + ", such as " + command + " 3");
  return n;
}

// "(%0 : float64 [4]) -> (%3 : float64 [4])": what the program takes and
// returns, each with its path where the program has names ("0.position %0
// : float64 [3]").
std::string signature(const ir::Program& p, const Names& names, const rune::Program& loaded) {
  auto typed = [&](const std::vector<int>& values, std::span<const std::string> paths) {
    std::string s;
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (!s.empty()) s += ", ";
      if (k < paths.size() && !paths[k].empty()) s += paths[k] + " ";
      s += name_text(names.number(p, values[k])) + " : " + nx::ops::to_string(p.types[std::size_t(values[k])]);
    }
    return "(" + s + ")";
  };
  return typed(p.params, loaded.param_names()) + " -> " + typed(p.results, loaded.result_names());
}

bool is_parameter(const ir::Program& p, int value) { return std::ranges::find(p.params, value) != p.params.end(); }

}  // namespace

Session::Session(std::ostream& out) : out_(out) {}
Session::~Session() = default;

void Session::run(LineSource& in) {
  while (!quitting_)
    if (std::optional<std::string> line = in.read_line(prompt)) execute(*line);
    else return;
}

void Session::execute(const std::string& line) {
  const std::string text = trimmed(line);
  if (text.empty() || text[0] == '#') return;
  const std::size_t space = text.find_first_of(" \t");
  const std::string name = text.substr(0, space);
  const Command* command = find_command(name);
  if (!command) {
    out_ << "unknown command '" << name << "'; type help\n";
    return;
  }
  try {
    (this->*command->handler)(space == std::string::npos ? "" : trimmed(text.substr(space)));
  } catch (const std::invalid_argument& e) {  // the user's error (rune's documented kind): its message
    out_ << e.what() << '\n';
  } catch (const std::exception& e) {  // a bug in rune or here: said so (fuzz/fuzz_repl looks for it)
    out_ << "internal error: " << e.what() << '\n';
  }
}

const Session::Command* Session::find_command(const std::string& name) {
  for (const Command& c : commands())
    for (const std::string& n : c.names)
      if (n == name) return &c;
  return nullptr;
}

// ---- the program

void Session::help(const std::string& args) {
  no_arguments("help", args);
  out_ << "commands (short forms first):\n";
  for (const Command& c : commands()) {
    std::string head;
    for (std::size_t i = 1; i < c.names.size(); ++i) head += c.names[i] + ", ";
    head += c.usage;
    out_ << "  " << head << std::string(head.size() < 28 ? 28 - head.size() : 1, ' ') << c.summary << '\n';
  }
  out_ << help_notes;
}

void Session::load(const std::string& args) {
  if (args.empty()) throw std::invalid_argument("load takes a file name");
  // (read here rather than by rune::load_program, to give the reason a file
  // cannot be read)
  rune::Program loaded = rune::parse_program(file_text(args));
  program_ = loaded.shared();
  param_paths_.assign(loaded.param_names().begin(), loaded.param_names().end());
  result_paths_.assign(loaded.result_names().begin(), loaded.result_names().end());
  names_ = std::make_unique<Names>(*program_);
  listing_ = std::make_unique<Listing>(rune::to_string(loaded, SourceLines::shown), *program_, *names_);
  breakpoints_.clear();
  run_.reset();
  code_.reset();
  bytecode_run_.reset();
  out_ << "loaded " << args << ": " << signature(*program_, *names_, loaded) << '\n';
}

void Session::list(const std::string& args) {
  no_arguments("list", args);
  require_program();
  out_ << listing_->text();
}

void Session::require_program() const {
  if (!program_) throw std::invalid_argument("no program is loaded; use load FILE");
}

// ---- running

void Session::run_command(const std::string& args) {
  begin(args);
  go_on(true, 1);
}

void Session::start(const std::string& args) {
  begin(args);
  show_next(out_, run_->next(), *listing_);
}

void Session::reset(const std::string& args) {
  no_arguments("reset", args);
  std::vector<nx::Tensor> same = require_running().arguments();
  run_ = std::make_unique<Stepper>(program_, same);
  bytecode_run_.reset();
  show_next(out_, run_->next(), *listing_);
}

void Session::begin(const std::string& args) {
  require_program();
  const std::vector<Argument> written = parse_arguments(args);
  // (before the values are made: a shorthand of a huge shape is refused)
  ir::check_arguments(*program_, stand_ins(written), "rune::run", param_paths_);
  run_ = std::make_unique<Stepper>(program_, make_arguments(written));
  bytecode_run_.reset();  // it ran on the arguments of the run just replaced
}

void Session::step(const std::string& args) {
  const int count = count_of("step", "steps", args);
  Stepper& run = require_unfinished();
  for (int i = 0; i < count && !run.finished(); ++i)
    for (const Produced& p : run.step()) out_ << value_text(p) << '\n';
  if (run.finished()) show_results(out_, run.results(), result_paths_);
}

void Session::continue_command(const std::string& args) {
  const int count = count_of("continue", "stops", args);
  require_unfinished();
  go_on(false, count);
}

// Steps until the next action defines a breakpoint's value for the
// `stops`th time (not checking the first action when continuing from a
// stop) or the program finishes. Only the last stop is shown.
void Session::go_on(bool check_first, int stops) {
  for (bool check = check_first; !run_->finished(); check = true) {
    Stepper::Next next = run_->next();
    const Breakpoint* hit = check ? breakpoints_.stopping(next.defines) : nullptr;
    if (hit && --stops == 0) {
      out_ << "stopped at breakpoint " << breakpoint_text(*hit) << '\n';
      return show_next(out_, next, *listing_);
    }
    for (const Produced& p : run_->step()) {
      const std::optional<std::string> bad = break_on_nan_ ? first_non_finite_text(p.value) : std::nullopt;
      if (bad && --stops == 0) {
        out_ << "stopped: " << name_text(p.number) << " holds " << *bad << '\n' << value_text(p) << '\n';
        return;
      }
    }
  }
  show_results(out_, run_->results(), result_paths_);
}

void Session::where(const std::string& args) {
  no_arguments("where", args);
  const Stepper::Next next = require_running().next();  // before *listing_: it exists only once loaded
  show_next(out_, next, *listing_);
}

Stepper& Session::require_running() const {
  require_program();
  if (!run_) throw std::invalid_argument("no run has started; use run ARGS or start ARGS");
  return *run_;
}

Stepper& Session::require_unfinished() const {
  Stepper& run = require_running();
  if (run.finished()) throw std::invalid_argument("the program has finished; run, start or reset begins again");
  return run;
}

// ---- the bytecode

void Session::bytecode(const std::string& args) {
  no_arguments("bytecode", args);
  out_ << vm::listing(*code(), /*source_lines=*/true);
}

void Session::native(const std::string& args) {
  no_arguments("native", args);
  out_ << vm::native_listing(*code());
}

// One run of the bytecode under the profiler (rune::profile), on ARGS (then
// the run starts on them, as `start` does) or the current run's arguments.
void Session::profile(const std::string& args) {
  if (!args.empty()) begin(args);
  const std::vector<nx::Tensor> arguments = require_running().arguments();
  const std::shared_ptr<const vm::Code>& compiled = code();
  rune::detail::Profiling profiling;
  vm::run(*compiled, arguments);
  out_ << profiling.profile().table();
}

void Session::stepi(const std::string& args) { run_instructions("stepi", args, false); }
void Session::nexti(const std::string& args) { run_instructions("nexti", args, true); }

void Session::run_instructions(const std::string& command, const std::string& args, bool over) {
  const int count = count_of(command, "instructions", args);
  const Stepper& run = require_running();  // its arguments, checked as rune::run checks them
  if (!bytecode_run_) bytecode_run_ = std::make_unique<BytecodeRun>(code(), run.arguments());
  for (int i = 0; i < count && !bytecode_run_->finished(); ++i)
    out_ << executed_text(over ? bytecode_run_->step_over() : bytecode_run_->step()) << '\n';
  if (bytecode_run_->finished()) {
    show_results(out_, program_results(bytecode_run_->results()), result_paths_);
    bytecode_run_.reset();  // the next stepi starts over
  }
}

// The loaded program compiled as rune::run compiles it: as loaded, for its
// parameters' types.
const std::shared_ptr<const vm::Code>& Session::code() {
  require_program();
  if (!code_) code_ = vm::build(program_, {});
  return code_;
}

std::vector<Produced> Session::program_results(const std::vector<nx::Tensor>& values) const {
  std::vector<Produced> out;
  for (std::size_t k = 0; k < values.size(); ++k)
    out.push_back({names_->number(*program_, program_->results[k]), values[k], ""});
  return out;
}

// ---- breakpoints and values

void Session::break_command(const std::string& args) {
  require_program();
  if (args.empty()) return list_breakpoints();
  if (args == "nan") {
    break_on_nan_ = true;
    out_ << "breakpoint after the first NaN or infinity\n";
    return;
  }
  for (const Breakpoint& b : parse_breakpoints(words(args))) {
    const int n = existing_value(b.number);
    const Names::Place place = *names_->find(n);
    if (place.program == program_.get() && is_parameter(*place.program, place.value))
      throw std::invalid_argument(name_text(n) + " is a parameter of the program: it has its value from the start");
    check_run(b, *names_);
    breakpoints_.add(b);
    out_ << "breakpoint at " << breakpoint_text(b) << '\n';
  }
}

void Session::list_breakpoints() {
  if (breakpoints_.empty() && !break_on_nan_) out_ << "no breakpoints\n";
  else out_ << "breakpoints: " << breakpoints_.text() << (breakpoints_.empty() || !break_on_nan_ ? "" : " ")
            << (break_on_nan_ ? "nan" : "") << '\n';
}

void Session::delete_command(const std::string& args) {
  if (args.empty()) {
    breakpoints_.clear();
    break_on_nan_ = false;
    out_ << "deleted all breakpoints\n";
    return;
  }
  if (args == "nan") {
    if (!break_on_nan_) throw std::invalid_argument("no breakpoint at nan");
    break_on_nan_ = false;
    out_ << "deleted the breakpoint after a NaN or infinity\n";
    return;
  }
  for (const Breakpoint& b : parse_breakpoints(words(args))) {
    if (!breakpoints_.remove(b)) throw std::invalid_argument("no breakpoint at " + breakpoint_text(b));
    out_ << "deleted breakpoint at " << breakpoint_text(b) << '\n';
  }
}

void Session::print(const std::string& args) {
  if (args.empty()) return list(args);
  for (const std::string& word : value_words(args)) {
    const IndexedName value = parse_indexed(word);
    print_value(existing_value(value.number), value.index);
  }
}

void Session::stats(const std::string& args) {
  if (args.empty()) throw std::invalid_argument("stats takes values: stats %7 or stats %7[2:5]");
  for (const std::string& word : value_words(args)) {
    const IndexedName value = parse_indexed(word);
    const int number = existing_value(value.number);
    const std::optional<Produced> now = run_ ? run_->value(number) : std::nullopt;
    if (!now) return print_value(number, value.index);  // (says why there is no value)
    const std::string name = value.index.empty() ? name_text(number) : name_text(number) + "[" + value.index + "]";
    const nx::Tensor part = value.index.empty() ? now->value : indexed(now->value, value.index, name);
    out_ << name << " = " << nx::name(part.dtype()) << ' ' << nx::to_string(part.shape()) << ": " << stats_text(part)
         << '\n';
  }
}

void Session::print_value(int number, const std::string& index) const {
  const std::string name = name_text(number);
  if (!run_) {
    out_ << name << " is not computed: no run has started\n";
  } else if (std::optional<Produced> value = run_->value(number)) {
    if (!index.empty()) {
      const std::string part = name + "[" + index + "]";
      value->value = indexed(value->value, index, part);
      out_ << part << value_text(*value).substr(name.size()) << '\n';
    } else {
      out_ << value_text(*value) << '\n';
    }
  } else if (run_->running(number)) {
    out_ << name << " is not computed yet\n";
  } else {
    const Names::Owner& owner = names_->owner_of(*names_->find(number)->program);
    out_ << name << " is not computed now: it belongs to " << owner.text() << ", which is not running\n";
  }
}

// `n`, if the program has a value %n.
int Session::existing_value(int n) const {
  require_program();
  if (!names_->find(n))
    throw std::invalid_argument("no value " + name_text(n) + ": the program has " +
                                (names_->count() == 0 ? "none" : "%0 to " + name_text(names_->count() - 1)));
  return n;
}

void Session::quit(const std::string& args) {
  no_arguments("quit", args);
  quitting_ = true;
}

}  // namespace rune::repl
