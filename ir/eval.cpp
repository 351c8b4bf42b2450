#include "ir/eval.hpp"

#include "ir/construct.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/trace.hpp"
#include "rune/nx.hpp"
#include "rune/tree.hpp"

namespace rune::ir {

namespace {
thread_local int replays = 0;
thread_local int evaluating = 0;  // the reference interpreter's depth

bool is_map(const nx::ops::Trace& trace) {
  const auto* t = dynamic_cast<const Trace*>(&trace);
  return t && t->maps_lanes();
}

// The innermost map deeper than `trace` (null: any), else `trace`.
nx::ops::Trace* every_lanes_trace(nx::ops::Trace* trace) {
  const int floor = trace ? trace->level() : 0;
  for (int level = nx::ops::trace_depth(); level > floor; --level)
    if (is_map(nx::ops::trace_at(level))) return &nx::ops::trace_at(level);
  return trace;
}
}  // namespace

Replay::Replay() { ++replays; }
Replay::~Replay() { --replays; }
bool replaying() { return replays > 0; }

std::vector<nx::Tensor> bind_construct(const Equation& eq, std::span<const nx::Tensor> inputs, std::string_view api) {
  const ConstructRules& rules = construct_rules(eq.kind);
  if (replaying()) {
    if (!rules.replayed) return {};
    if (holds_unreplayed(eq)) return bind_construct(replayed_part(eq), inputs, api);
  }
  bool traced = nx::ops::trace_depth() > 0;
  for (const nx::Tensor& t : inputs) traced = traced || t.is_traced();
  nx::ops::Trace* trace = traced ? nx::ops::find_trace(inputs, api) : nullptr;
  // (a construct holding such a construct too: run once below the map, its
  // adds would count every lane's into its one execution)
  if (traced && (rules.every_lane || holds_unreplayed(eq))) trace = every_lanes_trace(trace);
  if (!trace) return evaluating > 0 ? eager_construct(eq, inputs) : run_construct(eq, inputs);
  return static_cast<Trace&>(*trace).process_construct(eq, inputs);
}

namespace {
// "argument 0" or "argument 0.position": a value by its path where known.
std::string value_name(const char* what, std::size_t k, std::span<const std::string> names) {
  return std::string(what) + " " + (k < names.size() ? path_name(names[k]) : std::to_string(k));
}

bool overlap(const nx::detail::TensorImpl& a, const nx::detail::TensorImpl& b) {
  const auto pa = reinterpret_cast<std::uintptr_t>(nx::ops::base_address(a));
  const auto pb = reinterpret_cast<std::uintptr_t>(nx::ops::base_address(b));
  const auto bytes = [](const nx::detail::TensorImpl& t) { return std::uintptr_t(nx::numel(t.shape)) * nx::size_of(t.dtype); };
  return pa < pb + bytes(b) && pb < pa + bytes(a) && bytes(a) > 0 && bytes(b) > 0;
}

void check_values(const Program& p, std::span<const nx::Tensor> values, const std::vector<int>& program_values,
                  const char* what, std::string_view verb, std::string_view api, std::span<const std::string> names) {
  if (values.size() != program_values.size())
    nx::ops::fail(api, "the program " + std::string(verb) + " " + std::to_string(program_values.size()) + " " + what +
                           "s, got " + std::to_string(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].defined())
      nx::ops::fail(api, value_name(what, i, names) + " holds no value (it was default-constructed)");
    const TensorType& want = p.types[std::size_t(program_values[i])];
    if (nx::ops::type_of(values[i]) != want)
      nx::ops::fail(api, value_name(what, i, names) + " is " + nx::ops::describe(values[i]) + ", the program " +
                             std::string(verb) + " " + nx::ops::to_string(want));
  }
}
}  // namespace

void check_arguments(const Program& p, std::span<const nx::Tensor> args, std::string_view api,
                     std::span<const std::string> names) {
  check_values(p, args, p.params, "argument", "takes", api, names);
}

void check_result_buffers(const Program& p, std::span<const nx::Tensor> buffers, std::string_view api,
                          std::span<const std::string> names) {
  check_values(p, buffers, p.results, "result", "returns", api, names);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const nx::detail::TensorImpl& t = *buffers[i].impl();
    if (!t.storage || !t.storage->borrowed || !t.storage->writable || !nx::ops::is_contiguous(t))
      nx::ops::fail(api, value_name("result", i, names) +
                             " is not writable caller memory in C order (nx::borrow of a pointer to non-const)");
    for (std::size_t j = 0; j < i; ++j)
      if (overlap(t, *buffers[j].impl()))
        nx::ops::fail(api, value_name("result", i, names) + " and " + value_name("result", j, names) +
                               " share memory");
  }
}

std::string_view entry_point(const Equation& eq) {
  if (eq.kind == OpKind::custom && eq.code<CustomRule>()->reverse_only) return "rune::custom_vjp";
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
    const nx::detail::Placing here(eq.site);
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
