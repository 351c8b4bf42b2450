// The loaded program's bytecode run one instruction at a time (`stepi`),
// apart from the equation stepper (stepper.hpp): the code (vm/compile.hpp
// of the program as loaded, as rune::run compiles it), a frame started on
// the run's arguments (vm::start) and the next instruction. A construct
// instruction (a scan, an iterate, a cond, a remat's body) runs whole; the
// instructions it ran inside it are then shown one stepi at a time (a
// scan's step row by row), before its own; a loop running as machine code
// shows none.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "vm/machine.hpp"

namespace rune::repl {

// What one instruction did: its index, its text and the registers it wrote.
struct Executed {
  std::size_t pc = 0;
  std::string instruction;             // vm::instruction_text
  std::vector<std::string> registers;  // vm::register_text of each register written (a large tensor summarized)
  std::string where;                   // inside a construct: its runs, innermost first ("row 2 of scan 0")
};

// "   3  mul_f64    s5 = s3 s4", as the listing numbers it, then each
// register written on a line of its own, indented: "        s5 = float64 [] 2.5";
// inside a construct, indented once more and followed by where it ran.
std::string executed_text(const Executed& e);

class BytecodeRun {
 public:
  // Starts `code` on `args` (already checked against the program's types),
  // stopped before instruction 0.
  BytecodeRun(std::shared_ptr<const vm::Code> code, const std::vector<nx::Tensor>& args);

  bool finished() const { return pc_ == code_->instructions.size() && pending_.empty(); }
  // Runs the next instruction (or shows the next one a construct ran inside
  // it). One that throws stays the next (any register it wrote before it
  // threw keeps what it wrote).
  Executed step();
  // The same, a construct shown as its own line alone (inside one being
  // shown: the rest of it skipped to that line).
  Executed step_over();
  // The values of the code's results (once finished).
  std::vector<nx::Tensor> results() const {
    vm::Values values = vm::results(*code_, frame_);
    return {values.begin(), values.end()};
  }

 private:
  std::shared_ptr<const vm::Code> code_;
  vm::Frame frame_;
  std::size_t pc_ = 0;  // the next instruction
  std::deque<Executed> pending_;  // what a construct ran inside it, and its own line, not shown yet
};

}  // namespace rune::repl
