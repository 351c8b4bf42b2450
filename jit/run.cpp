// rune::run and rune::bytecode: a program compiled once, for its
// parameters' types, and run on the VM (or the reference interpreter:
// vm/executor.hpp); rune::run_into writes the results into caller memory.
#include "ir/eval.hpp"
#include "rune/load.hpp"
#include "rune/program.hpp"
#include "vm/executables.hpp"
#include "vm/executor.hpp"
#include "vm/listing.hpp"

namespace rune {

const vm::Code& Program::code() const {
  (void)ir();  // (throws for an empty program)
  std::call_once(compiled_->once, [this] { compiled_->code = vm::build(impl_, {}); });
  return *compiled_->code;
}

namespace detail {

std::vector<nx::Tensor> run(std::string_view api, const Program& program, std::span<const nx::Tensor> args) {
  ir::check_arguments(program.ir(), args, api, program.param_names());
  vm::Values values = vm::execute(program.code(), args, api);
  return {std::make_move_iterator(values.begin()), std::make_move_iterator(values.end())};
}

void run_into(std::string_view api, const Program& program, std::span<const nx::Tensor> args,
              std::span<const nx::Tensor> results) {
  ir::check_arguments(program.ir(), args, api, program.param_names());
  ir::check_result_buffers(program.ir(), results, api, program.result_names());
  vm::execute_into(program.code(), args, results, api);
}

}  // namespace detail

std::vector<nx::Tensor> run(const Program& program, const std::vector<nx::Tensor>& args) {
  return detail::run("rune::run", program, args);
}

void run_into(const Program& program, std::span<const nx::Tensor> args, std::span<const nx::Tensor> results) {
  detail::run_into("rune::run_into", program, args, results);
}

std::string bytecode(const Program& program) { return vm::listing(program.code()); }

}  // namespace rune
