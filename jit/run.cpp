// rune::run: a program compiled for its parameters' types and run on the
// VM (or the reference interpreter: vm/executor.hpp).
#include "ir/eval.hpp"
#include "rune/program.hpp"
#include "vm/compile.hpp"
#include "vm/executor.hpp"

namespace rune {

std::vector<nx::Tensor> run(const Program& program, const std::vector<nx::Tensor>& args) {
  ir::check_arguments(program.ir(), args);
  return vm::execute(*vm::compile(program.shared()), args, "rune::run");
}

}  // namespace rune
