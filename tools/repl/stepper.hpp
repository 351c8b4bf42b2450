// A program run one action at a time, for the debugger.
//
// The run is a stack of frames: the program's own, and above it one frame
// per construct being stepped through (the values of the sub-program it is
// running now, and the construct's state: ir::Stepping, from the construct
// table). Each action defines values:
//   equation   an equation computed whole (a primitive, a constant, a
//              construct that is not stepped through): its outputs;
//   enter      a construct: pushes a frame for its first run and binds its
//              parameters ("row 0" of a scan: the carry, a row of each xs,
//              the captures); a construct with no run (a scan of 0 rows)
//              is computed whole and defines its outputs;
//   next_run   after a run's last equation: gives its results to the
//              construct and binds the next run's parameters;
//   leave      after the last run: pops the frame and defines the
//              construct's outputs (a scan's final carry and stacked ys).
// Values are computed as the reference evaluator (ir/eval.cpp) computes them,
// so a stepped run gives what rune::run gives.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rune/program.hpp"
#include "tools/repl/names.hpp"

namespace rune::repl {

// A value an action defined, for display.
struct Produced {
  int number = -1;      // its %n
  nx::Tensor value;
  std::string where;    // the runs it belongs to, innermost first ("row 1 of %9, row 0 of %2"); "" at top level
};

class Stepper {
 public:
  enum class Kind { equation, enter, next_run, leave, done };
  // A value an action defines, and the run it is defined in: its frame's
  // label ("row 2", "until 0"; "" in the program's own frame).
  struct Defined {
    int number = -1;
    std::string run;
  };
  // The action the next step takes.
  struct Next {
    Kind kind = Kind::done;
    std::vector<Defined> defines;  // the values it defines or starts defining (breakpoints match these)
    int shown = -1;                // the value whose definition line shows it (see Listing)
    std::string where;             // the runs it is in
    std::string_view construct;  // enter, leave: the construct's word ("scan")
  };

  // Checks the arguments as rune::run does (count, dtypes, shapes; the same
  // messages) and stops before the first action.
  Stepper(std::shared_ptr<const ir::Program> program, std::vector<nx::Tensor> args);
  ~Stepper();

  Next next() const;
  bool finished() const { return next().kind == Kind::done; }
  // Takes the next action; returns the values it defined. An action that
  // throws leaves the run as it was.
  std::vector<Produced> step();
  // The program's results (once finished).
  std::vector<Produced> results() const;
  // The current value of %number; nullopt when it is not computed (yet, or
  // in this row) or its step program is not running.
  std::optional<Produced> value(int number) const;
  // Whether %number belongs to a frame on the stack (its program is running).
  bool running(int number) const;
  const Names& names() const { return names_; }
  const std::vector<nx::Tensor>& arguments() const { return args_; }

 private:
  struct Frame;
  std::shared_ptr<const ir::Program> program_;
  Names names_;
  std::vector<nx::Tensor> args_;
  std::vector<Frame> frames_;

  std::string run_text(std::size_t frame, const std::string& label) const;
  std::string where(std::size_t frame) const;
  std::vector<Produced> define(std::size_t frame, const std::vector<int>& values,
                               const std::vector<nx::Tensor>& tensors);
  std::vector<Produced> evaluate();
  std::vector<Produced> enter();
  std::vector<Produced> next_run();
  std::vector<Produced> leave();
  std::optional<std::size_t> frame_of(int number) const;
};

}  // namespace rune::repl
