#include "vm/executor.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <boost/container/small_vector.hpp>

#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/trace.hpp"
#include "vm/executables.hpp"
#include "vm/machine.hpp"
#include "vm/memory_plan.hpp"

namespace rune::vm {

bool reference_selected() {
  static const bool reference = [] {
    const char* v = std::getenv("RUNE_EXECUTOR");
    return v && std::string_view(v) == "reference";
  }();
  return reference;
}

namespace {
bool concrete(std::span<const nx::Tensor> args) {
  bool concrete = nx::ops::trace_depth() == 0;
  for (const nx::Tensor& t : args) concrete = concrete && t.defined() && !t.impl()->tracer;
  return concrete;
}

void check_not_donated(std::span<const nx::Tensor> args, std::string_view api) {
  for (const nx::Tensor& t : args)
    if (t.impl()->storage->donated.load(std::memory_order_relaxed)) (void)nx::ops::elements_of(t, api);
}

// A result to be written into a buffer, copied aside when it views caller
// memory (an argument returned as it is) that a buffer overlaps: a buffer
// written before it may be that memory. Every result is set aside before
// any buffer is written.
nx::Tensor aside(nx::Tensor value, std::span<const nx::Tensor> buffers) {
  const nx::detail::Storage& storage = *value.impl()->storage;
  if (!storage.borrowed) return value;
  for (const nx::Tensor& buffer : buffers)
    if (overlap(storage, *buffer.impl()->storage)) return nx::ops::copy(value);
  return value;
}

void write_results(Values values, std::span<const nx::Tensor> buffers) {
  for (nx::Tensor& value : values) value = aside(std::move(value), buffers);
  for (std::size_t k = 0; k < values.size(); ++k) nx::ops::copy_elements(*values[k].impl(), *buffers[k].impl());
}

Values evaluate(const Code& code, std::span<const nx::Tensor> args) {
  const ir::Program& program = code.traced && !concrete(args) ? *code.traced : *code.program;
  std::vector<nx::Tensor> values = ir::evaluate(program, args);
  return Values(std::make_move_iterator(values.begin()), std::make_move_iterator(values.end()));
}

bool shares_input(const nx::detail::Storage* storage, const Code& code, std::span<const nx::Tensor> args) {
  for (const nx::Tensor& t : args)
    if (t.impl()->storage.get() == storage) return true;
  for (const nx::Tensor& t : code.constant_values)
    if (t.impl()->storage.get() == storage) return true;
  return false;
}

Values apart(Values out, const Code& code, std::span<const nx::Tensor> args) {
  for (nx::Tensor& t : out)
    if (t.impl()->storage && shares_input(t.impl()->storage.get(), code, args)) t = nx::ops::copy(t);
  return out;
}
}  // namespace

Values execute(const Code& code, std::span<const nx::Tensor> args, std::string_view api) {
  if (!concrete(args) || reference_selected()) return evaluate(code, args);
  check_not_donated(args, api);
  return run(code, args);
}

Values execute_apart(const Code& code, std::span<const nx::Tensor> args, std::string_view api) {
  if (!concrete(args) || reference_selected()) return apart(evaluate(code, args), code, args);
  check_not_donated(args, api);
  return code.results_apart ? run(code, args) : apart(run(code, args), code, args);
}

void execute_into(const Code& code, std::span<const nx::Tensor> args, std::span<const nx::Tensor> buffers,
                  std::string_view api) {
  if (!concrete(args))
    nx::ops::fail(api, "writes results into caller memory: it runs on concrete values, outside a trace");
  check_not_donated(args, api);
  if (reference_selected()) return write_results(evaluate(code, args), buffers);
  Frame frame = start(code, args);
  frame.args = args;
  frame.into = buffers;  // (fused kernels may compute results there: vm::buffer_for)
  execute_checked(code, frame);
  // (scalar registers go straight to their buffers, with no 0-d tensor)
  boost::container::small_vector<nx::Tensor, 8> values(code.results.size());
  auto in_place = [&](std::size_t k) {  // (computed there, or an argument that is that memory, in order)
    const nx::detail::TensorImpl& value = *frame.tensors[std::size_t(code.results[k].index)].impl();
    return value.storage->data == buffers[k].impl()->storage->data && value.offset == 0 &&
           nx::ops::is_contiguous(value);
  };
  for (std::size_t k = 0; k < code.results.size(); ++k)
    if (!code.results[k].scalar && !in_place(k))
      values[k] = aside(frame.tensors[std::size_t(code.results[k].index)], buffers);
  for (std::size_t k = 0; k < code.results.size(); ++k) {
    const Location at = code.results[k];
    if (at.scalar)
      std::memcpy(nx::ops::base_address(*buffers[k].impl()), frame.scalars[std::size_t(at.index)].bytes,
                  nx::size_of(code.scalar_types[std::size_t(at.index)]));
    else if (values[k].defined())
      nx::ops::copy_elements(*values[k].impl(), *buffers[k].impl());
  }
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
  vm::Values values = vm::run(*vm::shared_build(std::move(program)), inputs);
  return {std::make_move_iterator(values.begin()), std::make_move_iterator(values.end())};
}

}  // namespace rune::ir
