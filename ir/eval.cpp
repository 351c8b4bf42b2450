#include "ir/eval.hpp"

#include "ir/construct.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/trace.hpp"
#include "rune/nx.hpp"

namespace rune::ir {

namespace {
thread_local int replays = 0;
thread_local int evaluating = 0;  // the reference interpreter's depth
}

Replay::Replay() { ++replays; }
Replay::~Replay() { --replays; }
bool replaying() { return replays > 0; }

std::vector<nx::Tensor> bind_construct(const Equation& eq, std::span<const nx::Tensor> inputs, std::string_view api) {
  if (replaying() && !construct_rules(eq.kind).replayed) return {};
  bool traced = nx::ops::trace_depth() > 0;
  for (const nx::Tensor& t : inputs) traced = traced || t.is_traced();
  if (traced)
    if (auto* trace = nx::ops::find_trace(inputs, api)) return static_cast<Trace&>(*trace).process_construct(eq, inputs);
  return evaluating > 0 ? eager_construct(eq, inputs) : run_construct(eq, inputs);
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
  if (eq.kind == OpKind::custom && eq.rule->reverse_only) return "rune::custom_vjp";
  return construct_rules(eq.kind).entry_point;
}

std::vector<nx::Tensor> evaluate(const Program& program, std::span<const nx::Tensor> args) {
  struct Depth {
    Depth() { ++evaluating; }
    ~Depth() { --evaluating; }
  } depth;
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

std::vector<nx::Tensor> eager_construct(const Equation& eq, std::span<const nx::Tensor> inputs) {
  return construct_rules(eq.kind).eager(eq, inputs);
}

}  // namespace rune::ir
