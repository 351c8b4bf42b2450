#include "tools/repl/bytecode_run.hpp"

#include <stdexcept>
#include <utility>

#include "tools/repl/inspect.hpp"
#include "tools/repl/listing.hpp"
#include "vm/listing.hpp"
#include "vm/operands.hpp"

namespace rune::repl {

std::string executed_text(const Executed& e) {
  std::string at = std::to_string(e.pc);
  at.insert(0, at.size() < 4 ? 4 - at.size() : 0, ' ');  // as vm::listing numbers instructions
  std::string out = at + "  " + e.instruction;
  for (const std::string& r : e.registers) out += "\n        " + r;
  return out;
}

BytecodeRun::BytecodeRun(std::shared_ptr<const vm::Code> code, const std::vector<nx::Tensor>& args)
    : code_(std::move(code)), frame_(vm::start(*code_, args)) {}

Executed BytecodeRun::step() {
  if (finished()) throw std::invalid_argument("the bytecode has finished");
  const vm::Instruction& in = code_->instructions[pc_];
  vm::execute(*code_, frame_, pc_, pc_ + 1);
  Executed e{pc_++, vm::instruction_text(*code_, in), {}};
  for (vm::Location at : vm::writes(*code_, in)) {
    std::string text = vm::register_text(*code_, frame_, at);
    const nx::Tensor value = vm::read(*code_, frame_, at);
    if (value.defined() && value.numel() > Listing::shown_elements)  // (its type alone otherwise)
      text = text.substr(0, text.find(" = ")) + " = " + summary_text(value, Listing::shown_elements);
    e.registers.push_back(text);
  }
  return e;
}

}  // namespace rune::repl
