// The calls on tensor registers: a primitive by its rule (into the buffer
// the memory plan chose, when the rule computes into one), a construct by
// its eager rule, a check whose failure the call's CheckScope keeps.
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "ir/eval.hpp"
#include "ir/trace.hpp"
#include "vm/machine.hpp"
#include "vm/memory_plan.hpp"

namespace rune::vm {
namespace {

using Operands = boost::container::small_vector<nx::Tensor, 4>;

Operands operands_of(const Call& call, const Frame& f) {
  Operands in;
  for (std::int32_t r : call.inputs) in.push_back(f.tensors[std::size_t(r)]);
  return in;
}

}  // namespace

// The program is typed: the checks bind repeats have passed (a primitive
// without an eager rule, a collective, goes through bind).
void run_primitive(const Call& call, Frame& f) {
  const bool over_operand = writes_over_operand(call, f);  // (before the operands hold it too)
  const Operands in = operands_of(call, f);
  const std::span<const nx::Tensor> operands(in.data(), in.size());
  const ir::Equation& eq = *call.equation;
  const nx::ops::Rules& rules = nx::ops::rules(eq.prim);
  nx::Tensor& out = f.tensors[std::size_t(call.outputs[0])];
  if (rules.into) {  // (into the buffer the memory plan chose)
    nx::Tensor buffer = over_operand ? in[0] : output_for(call, f);
    rules.into(eq.prim, operands, eq.params, buffer);
    if (over_operand) f.tensors[std::size_t(call.donor)] = nx::Tensor();  // (it dies here)
    out = std::move(buffer);
    return;
  }
  out = rules.eager ? nx::ops::apply_eager(eq.prim, operands, eq.params, call.type)
                    : nx::ops::bind(eq.prim, operands, eq.params);
}

void run_construct(const Call& call, Frame& f) {
  const Operands in = operands_of(call, f);
  std::vector<nx::Tensor> out =
      ir::bind_construct(*call.equation, std::span<const nx::Tensor>(in.data(), in.size()),
                         ir::entry_point(*call.equation));
  for (std::size_t k = 0; k < out.size() && k < call.outputs.size(); ++k)
    f.tensors[std::size_t(call.outputs[k])] = std::move(out[k]);
}

void run_check(const Call& call, Frame& f) {
  try {
    run_construct(call, f);
  } catch (...) {
    CheckScope::failed(std::current_exception());
  }
}

}  // namespace rune::vm
