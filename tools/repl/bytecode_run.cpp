#include "tools/repl/bytecode_run.hpp"

#include <stdexcept>
#include <utility>

#include "tools/repl/inspect.hpp"
#include "tools/repl/listing.hpp"
#include "vm/listing.hpp"
#include "vm/observer.hpp"
#include "vm/operands.hpp"

namespace rune::repl {

namespace {

bool is_construct(vm::Op op) {
  return op == vm::Op::scan || op == vm::Op::cond || op == vm::Op::iterate || op == vm::Op::body;
}

// What `in` ran as, as the debugger shows it.
Executed executed(const vm::Code& code, const vm::Instruction& in, const vm::Frame& frame, std::string where) {
  const std::size_t pc = std::size_t(&in - code.instructions.data());
  Executed e{pc, vm::instruction_text(code, in) + vm::site_text(code, pc), {}, std::move(where)};
  for (vm::Location at : vm::writes(code, in)) {
    std::string text = vm::register_text(code, frame, at);
    const nx::Tensor value = vm::read(code, frame, at);
    if (value.defined() && value.numel() > Listing::shown_elements)  // (its type alone otherwise)
      text = text.substr(0, text.find(" = ")) + " = " + summary_text(value, Listing::shown_elements);
    e.registers.push_back(text);
  }
  return e;
}

// Records the instructions a construct instruction runs inside it (a scan's
// step row by row, an iterate's until and step in turn, a cond's branch),
// each with the runs it is in, innermost first ("row 2 of scan 0").
class Inside final : public vm::Observer {
 public:
  Inside(const vm::Code& code, std::vector<Executed>& into) : outer_(code), into_(into) {}

  void before(const vm::Code& code, const vm::Instruction& in, const vm::Frame&) override {
    if (&in == code.instructions.data() && !runs_.empty() && &code != &outer_) runs_.back().began(code);
    if (is_construct(in.op)) runs_.push_back(Construct(code, in));
  }
  void after(const vm::Code& code, const vm::Instruction& in, const vm::Frame& frame) override {
    if (is_construct(in.op)) runs_.pop_back();
    if (&code == &outer_) return;  // (the construct itself: its caller shows it)
    if (into_.size() < most_shown) into_.push_back(executed(code, in, frame, where()));
    else ++not_shown_;
  }
  void failed(const vm::Code&, const vm::Instruction& in) override {
    if (is_construct(in.op)) runs_.pop_back();
  }
  // Instructions run inside past the most shown.
  std::size_t not_shown() const { return not_shown_; }
  static constexpr std::size_t most_shown = 10000;

 private:
  // A construct running, and how many runs of each of its sub-codes began.
  struct Construct {
    Construct(const vm::Code& code, const vm::Instruction& in) {
      name = (in.op == vm::Op::scan ? "scan " : in.op == vm::Op::cond ? "cond " : in.op == vm::Op::iterate ? "iterate "
                                                                                                            : "body ") +
             std::to_string(in.aux);
      if (in.op == vm::Op::iterate) until = code.invokes[std::size_t(in.aux)].codes[0].get();
      op = in.op;
    }
    void began(const vm::Code& sub) {
      if (op == vm::Op::iterate) run = &sub == until ? "until " + std::to_string(untils++) : "step " + std::to_string(steps++);
      else if (op == vm::Op::scan) run = "row " + std::to_string(steps++);
      else run = op == vm::Op::cond ? "branch" : "body";
    }
    std::string name, run;
    vm::Op op;
    const vm::Code* until = nullptr;
    std::int64_t untils = 0, steps = 0;
  };
  std::string where() const {
    std::string out;
    for (auto c = runs_.rbegin(); c != runs_.rend(); ++c) out += (out.empty() ? "" : ", ") + c->run + " of " + c->name;
    return out;
  }

  const vm::Code& outer_;
  std::vector<Executed>& into_;
  std::vector<Construct> runs_;
  std::size_t not_shown_ = 0;
};

}  // namespace

std::string executed_text(const Executed& e) {
  std::string at = std::to_string(e.pc);
  at.insert(0, at.size() < 4 ? 4 - at.size() : 0, ' ');  // as vm::listing numbers instructions
  const std::string indent = e.where.empty() ? "" : "  ";
  std::string out = indent + at + "  " + e.instruction + (e.where.empty() ? "" : "   (" + e.where + ")");
  for (const std::string& r : e.registers) out += "\n        " + indent + r;
  return out;
}

BytecodeRun::BytecodeRun(std::shared_ptr<const vm::Code> code, const std::vector<nx::Tensor>& args)
    : code_(std::move(code)), frame_(vm::start(*code_, args)) {}

Executed BytecodeRun::step() {
  if (!pending_.empty()) {
    Executed next = std::move(pending_.front());
    pending_.pop_front();
    return next;
  }
  if (finished()) throw std::invalid_argument("the bytecode has finished");
  const vm::Instruction& in = code_->instructions[pc_];
  if (!is_construct(in.op)) return step_over();
  // A construct runs whole; what ran inside it is shown a stepi at a time
  // before its own line (a loop running as machine code shows none).
  std::vector<Executed> inside;
  Inside recorder(*code_, inside);
  {
    vm::Observing observing(recorder, false);
    vm::execute(*code_, frame_, pc_, pc_ + 1);
  }
  ++pc_;
  pending_.assign(std::make_move_iterator(inside.begin()), std::make_move_iterator(inside.end()));
  Executed own = executed(*code_, in, frame_, "");
  if (recorder.not_shown() > 0)
    own.registers.insert(own.registers.begin(), "(and " + std::to_string(recorder.not_shown()) +
                                                    " more instructions inside it, not shown)");
  pending_.push_back(std::move(own));
  return step();
}

Executed BytecodeRun::step_over() {
  if (!pending_.empty()) {
    Executed own = std::move(pending_.back());
    pending_.clear();
    return own;
  }
  if (finished()) throw std::invalid_argument("the bytecode has finished");
  const vm::Instruction& in = code_->instructions[pc_];
  vm::execute(*code_, frame_, pc_, pc_ + 1);
  ++pc_;
  return executed(*code_, in, frame_, "");
}

}  // namespace rune::repl
