// rune::run and rune::bytecode: a program compiled once, for its
// parameters' types, and run on the VM (or the reference interpreter:
// vm/executor.hpp).
#include "ir/eval.hpp"
#include "rune/program.hpp"
#include "vm/compile.hpp"
#include "vm/executor.hpp"
#include "vm/listing.hpp"

namespace rune {

const vm::Code& Program::code() const {
  (void)ir();  // (throws for an empty program)
  std::call_once(compiled_->once, [this] { compiled_->code = vm::compile(impl_); });
  return *compiled_->code;
}

std::vector<nx::Tensor> run(const Program& program, const std::vector<nx::Tensor>& args) {
  ir::check_arguments(program.ir(), args);
  return vm::execute(program.code(), args, "rune::run");
}

std::string bytecode(const Program& program) { return vm::listing(program.code()); }

}  // namespace rune
