#include "vm/executor.hpp"

#include <cstdlib>
#include <string_view>

#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ops/concrete.hpp"
#include "ops/trace.hpp"
#include "vm/compile.hpp"
#include "vm/machine.hpp"

namespace rune::vm {

bool reference_selected() {
  static const bool reference = [] {
    const char* v = std::getenv("RUNE_EXECUTOR");
    return v && std::string_view(v) == "reference";
  }();
  return reference;
}

std::vector<nx::Tensor> execute(const Code& code, std::span<const nx::Tensor> args, std::string_view api) {
  bool concrete = nx::ops::trace_depth() == 0 && !reference_selected();
  for (const nx::Tensor& t : args) concrete = concrete && t.defined() && !t.is_traced();
  if (!concrete) return ir::evaluate(*code.program, args);
  for (const nx::Tensor& t : args)
    if (t.impl()->storage->donated.load(std::memory_order_relaxed)) (void)nx::ops::elements_of(t, api);
  return run(code, args);
}

}  // namespace rune::vm

namespace rune::ir {

// Declared in ir/eval.hpp: ir/ calls it without depending on the VM.
std::vector<nx::Tensor> run_construct(const Equation& eq, std::span<const nx::Tensor> inputs) {
  if (lowering(eq) == Lowering::eager || vm::reference_selected())
    return eager_construct(eq, inputs);
  auto program = std::make_shared<Program>();
  std::vector<TensorType> types;
  for (const nx::Tensor& t : inputs) {
    types.push_back(nx::ops::type_of(t));
    program->params.push_back(program->add_value(types.back()));
  }
  Equation copy = eq;
  copy.inputs = program->params;
  copy.outputs.clear();
  for (const TensorType& t : construct_output_types(eq, types)) copy.outputs.push_back(program->add_value(t));
  program->results = copy.outputs;
  program->equations.push_back(std::move(copy));
  return vm::run(*vm::compile(program), inputs);
}

}  // namespace rune::ir

namespace rune::vm {

}  // namespace rune::vm
