#include "ir/eval.hpp"

#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/trace.hpp"
#include "rune/nx.hpp"

namespace rune::ir {

std::vector<nx::Tensor> bind_construct(const Equation& eq, std::span<const nx::Tensor> inputs, std::string_view api) {
  bool traced = nx::ops::trace_depth() > 0;
  for (const nx::Tensor& t : inputs) traced = traced || t.is_traced();
  if (traced)
    if (auto* trace = nx::ops::find_trace(inputs, api)) return static_cast<Trace&>(*trace).process_construct(eq, inputs);
  return eager_construct(eq, inputs);
}

void check_arguments(const Program& p, std::span<const nx::Tensor> args) {
  if (args.size() != p.params.size())
    nx::ops::fail("rune::run", "the program takes " + std::to_string(p.params.size()) + " arguments, got " +
                                   std::to_string(args.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined())
      nx::ops::fail("rune::run", "argument " + std::to_string(i) + " holds no value (it was default-constructed)");
    const TensorType& want = p.types[std::size_t(p.params[i])];
    if (nx::ops::type_of(args[i]) != want)
      nx::ops::fail("rune::run", "argument " + std::to_string(i) + " is " + nx::ops::describe(args[i]) +
                                     ", the program takes " + nx::ops::to_string(want));
  }
}

std::string_view entry_point(const Equation& eq) {
  switch (eq.kind) {
    case OpKind::check: return "nx::check";
    case OpKind::callback: return "rune::callback";
    case OpKind::custom: return eq.rule->reverse_only ? "rune::custom_vjp" : "rune::custom_jvp";
    default: return "rune::scan";
  }
}

std::vector<nx::Tensor> evaluate(const Program& program, std::span<const nx::Tensor> args) {
  std::vector<nx::Tensor> env(program.types.size());
  for (std::size_t i = 0; i < program.params.size(); ++i) env[std::size_t(program.params[i])] = args[i];
  std::vector<nx::Tensor> in;
  for (const Equation& eq : program.equations) {
    in.clear();
    for (int v : eq.inputs) in.push_back(env[std::size_t(v)]);
    switch (eq.kind) {
      case OpKind::primitive: env[std::size_t(eq.outputs[0])] = nx::ops::bind(eq.prim, in, eq.params); break;
      case OpKind::constant: env[std::size_t(eq.outputs[0])] = eq.constant; break;
      default: {
        std::vector<nx::Tensor> out = bind_construct(eq, in, entry_point(eq));
        for (std::size_t k = 0; k < out.size(); ++k) env[std::size_t(eq.outputs[k])] = out[k];
      }
    }
  }
  std::vector<nx::Tensor> results;
  for (int v : program.results) results.push_back(env[std::size_t(v)]);
  return results;
}

namespace {
// Runs the step once per row and stacks the outputs.
std::vector<nx::Tensor> eager_scan(const Equation& eq, std::span<const nx::Tensor> inputs) {
  const ScanInfo& s = eq.scan;
  const Program& step = *eq.programs[0];
  std::vector<nx::Tensor> args(inputs.begin(), inputs.end());
  std::vector<std::vector<nx::Tensor>> ys(step.results.size() - std::size_t(s.carry_count));
  for (std::int64_t row = 0; row < s.length; ++row) {
    for (int k = 0; k < s.xs_count; ++k)
      args[std::size_t(s.carry_count + k)] = nx::get(inputs[std::size_t(s.carry_count + k)], row);
    std::vector<nx::Tensor> out = evaluate(step, args);
    for (int k = 0; k < s.carry_count; ++k) args[std::size_t(k)] = out[std::size_t(k)];
    for (std::size_t k = 0; k < ys.size(); ++k) ys[k].push_back(out[std::size_t(s.carry_count) + k]);
  }
  std::vector<nx::Tensor> results(args.begin(), args.begin() + s.carry_count);
  for (std::size_t k = 0; k < ys.size(); ++k) {
    if (s.length > 0) {
      results.push_back(nx::stack(ys[k]));
    } else {  // no rows: empty stacks of the step's output types
      TensorType t = step.types[std::size_t(step.results[std::size_t(s.carry_count) + k])];
      t.shape.insert(t.shape.begin(), 0);
      results.push_back(nx::zeros(t.dtype, t.shape));
    }
  }
  return results;
}
}  // namespace

namespace {
// The multi-index of the k-th element in C order.
nx::Index unravel(std::size_t k, const nx::Shape& shape) {
  nx::Index index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = std::int64_t(k % std::size_t(shape[d]));
    k /= std::size_t(shape[d]);
  }
  return index;
}

// The element at index, as a scalar tensor.
nx::Tensor element(const nx::Tensor& t, const nx::Index& index) {
  nx::Shape stop = index;
  for (auto& i : stop) ++i;
  return nx::reshape(nx::slice(t, index, stop), {});
}

// Throws the exception the check makes for the first false condition
// element; a data leaf shaped like that condition is given at the index.
void eager_check(const Equation& eq, std::span<const nx::Tensor> inputs) {
  const auto conditions = std::size_t(eq.check->condition_count);
  for (std::size_t c = 0; c < conditions; ++c) {
    std::vector<bool> holds = nx::to_vector<bool>(inputs[c]);
    for (std::size_t k = 0; k < holds.size(); ++k) {
      if (holds[k]) continue;
      const nx::Index index = unravel(k, inputs[c].shape());
      std::vector<nx::Tensor> data;
      for (const nx::Tensor& t : inputs.subspan(conditions))
        data.push_back(t.ndim() > 0 && t.shape() == inputs[c].shape() ? element(t, index) : t);
      std::rethrow_exception(eq.check->make(index, data));
    }
  }
}
}  // namespace

std::vector<nx::Tensor> eager_construct(const Equation& eq, std::span<const nx::Tensor> inputs) {
  switch (eq.kind) {
    case OpKind::check: eager_check(eq, inputs); return {};
    case OpKind::callback: return eq.host->run(inputs);
    case OpKind::scan: return eager_scan(eq, inputs);
    case OpKind::custom:  // recorded in a program: its program; called directly: its C++
      return eq.programs.empty() ? eq.rule->call(inputs) : evaluate(*eq.programs[0], inputs);
    case OpKind::linear_call:
      nx::ops::fail("rune::jvp", "a custom_vjp rule has no forward derivative; give the function a custom_jvp rule");
    default: return {};
  }
}

}  // namespace rune::ir
