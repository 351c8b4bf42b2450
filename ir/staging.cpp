#include "ir/staging.hpp"

#include "ir/construct.hpp"
#include "ir/passes/canonical.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/type_checks.hpp"

namespace rune::ir {

namespace {
// A value of a staging trace: it knows its index in the program being built.
struct StageTracer final : nx::detail::Tracer {
  int value;
  std::string_view by;
  StageTracer(int v, std::string_view b) : value(v), by(b) {}
  boost::intrusive_ptr<nx::detail::TensorImpl> primal() const override { return nullptr; }
  std::string_view traced_by() const override { return by; }
};
}  // namespace

nx::Tensor type_only(const TensorType& type) {
  boost::intrusive_ptr<nx::detail::TensorImpl> t(new nx::detail::TensorImpl);
  t->dtype = type.dtype;
  t->shape = type.shape;
  t->placement = type.placement;
  return nx::Tensor(std::move(t));
}

StagingTrace::StagingTrace(std::string_view entry_point, bool stages) : Trace(entry_point, stages) {}

nx::Tensor StagingTrace::stand_in(int value) {
  nx::Tensor t = type_only(program_.types[std::size_t(value)]);
  boost::intrusive_ptr<StageTracer> tracer(new StageTracer(value, entry_point()));
  adopt(*tracer);
  t.impl()->tracer = tracer;
  return t;
}

nx::Tensor StagingTrace::add_param(const TensorType& type) {
  int v = program_.add_value(type);
  program_.params.push_back(v);
  return stand_in(v);
}

int StagingTrace::lift(const nx::Tensor& t) {
  if (owns(t)) return static_cast<const StageTracer&>(*t.impl()->tracer).value;
  auto found = lifted_.find(t.impl());
  if (found != lifted_.end()) return found->second.second;
  int v = program_.add_value(nx::ops::type_of(t));
  if (t.is_traced()) {  // a value of an enclosing trace
    captures_.push_back(t);
    capture_params_.push_back(v);
  } else {
    Equation eq;
    eq.kind = OpKind::constant;
    // A copy: the program owns its constants (donating or dropping the value
    // read at the trace leaves the program whole).
    eq.constant = nx::ops::copy(nx::ops::elements_of(t, entry_point()));
    eq.outputs = {v};
    program_.equations.push_back(std::move(eq));
  }
  lifted_.emplace(t.impl(), std::pair{t, v});
  return v;
}

nx::Tensor StagingTrace::process(Prim p, std::span<const nx::Tensor> operands, const Params& params,
                                 const TensorType& type) {
  Equation eq;
  eq.prim = p;
  eq.params = params;
  eq.site = nx::ops::equation_site();
  for (const nx::Tensor& t : operands) eq.inputs.push_back(lift(t));
  int out = program_.add_value(type);
  eq.outputs = {out};
  program_.equations.push_back(std::move(eq));
  return stand_in(out);
}

void StagingTrace::holds_lanes(const nx::Tensor& value, std::int64_t lanes) {
  if (!owns(value) || program_.equations.empty()) return;
  Equation& last = program_.equations.back();
  const int v = static_cast<const StageTracer&>(*value.impl()->tracer).value;
  const nx::Shape& shape = program_.types[std::size_t(v)].shape;
  nx::ops::internal_assert(!shape.empty() && shape[0] == lanes, "a map's value to hold its lanes along axis 0");
  if (last.kind == OpKind::primitive && last.outputs == std::vector<int>{v}) last.lanes = {0, lanes};
}

std::vector<nx::Tensor> StagingTrace::process_construct(const Equation& construct, std::span<const nx::Tensor> given) {
  Equation eq = construct;  // (an equation of another program: its own values go)
  if (!eq.site) eq.site = nx::ops::equation_site();
  eq.inputs.clear();
  eq.outputs.clear();
  for (auto& sub : eq.programs) sub = deep_copy(*sub);  // (never shared between two places of a program)
  std::vector<nx::Tensor> inputs(given.begin(), given.end());
  if (auto record = construct_rules(eq.kind).record) record(eq, inputs);
  std::vector<TensorType> in_types;
  for (const nx::Tensor& t : inputs) {
    eq.inputs.push_back(lift(t));
    in_types.push_back(nx::ops::type_of(t));
  }
  std::vector<nx::Tensor> outs;
  for (const TensorType& type : construct_output_types(eq, in_types)) {
    int v = program_.add_value(type);
    eq.outputs.push_back(v);
    outs.push_back(stand_in(v));
  }
  program_.equations.push_back(std::move(eq));
  return outs;
}

std::shared_ptr<const Program> StagingTrace::finish(std::span<const nx::Tensor> results) {
  nx::ops::check_defined(entry_point(), results);
  for (const nx::Tensor& t : results) program_.results.push_back(lift(t));
  auto done = std::make_shared<Program>(std::move(program_));
  done->params.insert(done->params.end(), capture_params_.begin(), capture_params_.end());
  // A capture is numbered when first read, after the values made before it:
  // renumber so that parameters come first, as the text numbers them (else
  // the text parses back to a program that is not equal).
  return capture_params_.empty() ? done : std::make_shared<Program>(canonical(*done));
}

}  // namespace rune::ir
