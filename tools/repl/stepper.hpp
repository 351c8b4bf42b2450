// A program run one action at a time, for the debugger.
//
// The run is a stack of frames: the program's own, and above it one frame
// per scan being stepped through (its step program's values for the current
// row, plus the loop: the row, the carry, the ys collected so far). Each
// action defines values:
//   equation    a primitive or constant equation: its outputs;
//   start_scan  a scan equation: pushes the step's frame and binds row 0's
//               parameters (carry, a row of each xs, captures); a scan of 0
//               rows is computed whole and defines its outputs;
//   next_row    after a row's last equation: takes the row's carry and ys,
//               binds the next row's parameters;
//   end_scan    after the last row: pops the frame and defines the scan's
//               outputs (the final carry, each y stacked along a new axis).
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
  std::string where;    // the rows it belongs to, innermost first ("row 1 of %9, row 0 of %2"); "" at top level
};

class Stepper {
 public:
  enum class Kind { equation, start_scan, next_row, end_scan, done };
  // The action the next step takes.
  struct Next {
    Kind kind = Kind::done;
    std::vector<int> defines;  // the values it defines or starts defining (breakpoints match these)
    int shown = -1;            // the value whose definition line shows it (see Listing)
    std::string where;         // the rows it runs in
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

  std::string row_text(std::size_t frame, std::int64_t row) const;
  std::string where(std::size_t frame) const;
  std::vector<Produced> define(std::size_t frame, const std::vector<int>& values,
                               const std::vector<nx::Tensor>& tensors);
  std::vector<Produced> evaluate();
  std::vector<Produced> start_scan();
  std::vector<Produced> next_row();
  std::vector<Produced> end_scan();
  std::optional<std::size_t> frame_of(int number) const;
};

}  // namespace rune::repl
