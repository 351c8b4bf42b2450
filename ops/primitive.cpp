// The rules table and bind().
#include "ops/primitive.hpp"

#include <bit>
#include <tuple>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/nan_hunt.hpp"
#include "ops/sizes.hpp"
#include "ops/trace.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {

namespace {
const Rules* make_table() {
  static Rules rules[prim_count];
  RuleTable table(rules);
  register_elementwise(table);
  register_reductions(table);
  register_layout(table);
  register_linalg(table);
  register_decompositions(table);
  register_random(table);
  register_elementwise_derivatives(table);
  register_reduction_derivatives(table);
  register_layout_derivatives(table);
  register_linalg_derivatives(table);
  register_collectives(table);
  register_ranks(table);
  register_batching(table);
  return rules;
}

// Sets `field` of p's rules, which must not be set yet.
template <class F> void define_rule(F& field, F given, Prim p, const char* kind) {
  if (!given) return;
  if (field) internal_error("nx::ops::RuleTable", "the " + std::string(kind) + " rule of " + std::string(info(p).api) +
                                                      " is registered twice");
  field = given;
}
}  // namespace

void RuleTable::define(Prim p, const Rules& given) {
  Rules& r = rules_[int(p)];
  define_rule(r.type, given.type, p, "type");
  define_rule(r.eager, given.eager, p, "eager");
  define_rule(r.jvp, given.jvp, p, "jvp");
  define_rule(r.transpose, given.transpose, p, "transpose");
  define_rule(r.batch, given.batch, p, "batching");
  define_rule(r.into, given.into, p, "into");
}

bool Params::operator==(const Params& o) const {
  auto fields = [](const Params& p) {
    return std::tie(p.axes, p.shape, p.starts, p.stops, p.steps, p.lo, p.hi, p.interior, p.dtype, p.axis, p.mode);
  };
  return fields(*this) == fields(o) && std::bit_cast<std::uint64_t>(value) == std::bit_cast<std::uint64_t>(o.value);
}

const Rules& rules(Prim p) {
  static const Rules* table = make_table();
  return table[int(p)];
}

std::string to_string(const TensorType& t) { return std::string(name(t.dtype)) + " " + nx::to_string(t.shape); }

TensorType result_type(Prim p, std::span<const Tensor> operands, const Params& params) {
  TensorType type = rules(p).type(p, operands, params);
  check_shape(info(p).api, type.shape);
  return type;
}

Tensor bind(Prim p, std::span<const Tensor> operands, const Params& params) {
  const std::string_view api = info(p).api;
  check_defined(api, operands);
  const int arity = info(p).arity;
  if (arity >= 0 ? int(operands.size()) != arity : operands.empty())
    fail(api, "takes " + std::to_string(arity) + " operands, got " + std::to_string(operands.size()));
  TensorType type = result_type(p, operands, params);
  bool traced = trace_depth() > 0;
  for (const Tensor& t : operands) traced = traced || t.impl()->tracer;
  if (traced)
    if (Trace* trace = find_trace(p, operands, params)) return trace->process(p, operands, params, type);
  // No trace processes it: the primitive runs eagerly on elements.
  return apply_eager(p, operands, params, type);
}

Tensor apply_eager(Prim p, std::span<const Tensor> operands, const Params& params, const TensorType& type) {
  const std::string_view api = info(p).api;
  // a donated operand cannot be read (elements_of throws naming the api)
  for (const Tensor& t : operands)
    if (t.impl()->storage->donated.load(std::memory_order_relaxed)) (void)elements_of(t, api);
  // Only a collective has no eager rule: a running map of its axis computes
  // it (batch/), and none does.
  if (!rules(p).eager) fail(api, "no map of this axis is running (name one with rune::vmap(f, axis))");
  Tensor result = call_rule("eager", api, [&] { return rules(p).eager(p, operands, params, type); });
  if (hunting_nans()) check_made_finite(api, operands, result);
  return result;
}

}  // namespace nx::ops
