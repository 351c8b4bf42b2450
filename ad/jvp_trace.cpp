#include "ad/jvp_trace.hpp"

#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "rune/detail/autodiff.hpp"
#include "ops/errors.hpp"

namespace rune::ad {

namespace {
struct JvpTracer final : nx::detail::Tracer {
  nx::Tensor value, tangent;
  std::string_view by;
  JvpTracer(nx::Tensor v, nx::Tensor t, std::string_view b) : value(std::move(v)), tangent(std::move(t)), by(b) {}
  boost::intrusive_ptr<nx::detail::TensorImpl> primal() const override {
    return boost::intrusive_ptr<nx::detail::TensorImpl>(value.impl());
  }
  std::string_view traced_by() const override { return by; }
};
}  // namespace

namespace {
thread_local int paused = 0;
}

bool derivatives_paused() { return paused > 0; }

}  // namespace rune::ad

rune::detail::WithoutDerivatives::WithoutDerivatives() { ++ad::paused; }
rune::detail::WithoutDerivatives::~WithoutDerivatives() { --ad::paused; }

namespace rune::ad {

JvpTrace::JvpTrace(std::string_view entry_point, const ir::Trace* linear)
    : Trace(entry_point, false), linear_(linear) {}

nx::Tensor JvpTrace::wrap(const nx::Tensor& primal, const nx::Tensor& tangent) {
  if (!tangent.defined()) return primal;
  boost::intrusive_ptr<nx::detail::TensorImpl> t(new nx::detail::TensorImpl);
  const auto& p = *primal.impl();
  t->dtype = p.dtype;
  t->shape = p.shape;
  t->placement = p.placement;
  boost::intrusive_ptr<JvpTracer> tracer(new JvpTracer(primal, tangent, entry_point()));
  adopt(*tracer);
  t->tracer = tracer;
  return nx::Tensor(std::move(t));
}

nx::Tensor JvpTrace::primal_of(const nx::Tensor& t) const {
  return owns(t) ? static_cast<const JvpTracer&>(*t.impl()->tracer).value : t;
}

nx::Tensor JvpTrace::tangent_of(const nx::Tensor& t) const {
  if (!owns(t)) return nx::Tensor();
  const nx::Tensor& tangent = static_cast<const JvpTracer&>(*t.impl()->tracer).tangent;
  if (linear_ && tangent.defined() && !linear_->owns(tangent)) return nx::Tensor();
  return tangent;
}

nx::Tensor JvpTrace::process(ir::Prim p, std::span<const nx::Tensor> operands, const ir::Params& params,
                             const ir::TensorType&) {
  std::vector<nx::Tensor> primals, tangents;
  for (const nx::Tensor& t : operands) {
    primals.push_back(primal_of(t));
    tangents.push_back(tangent_of(t));
  }
  nx::Tensor out = nx::ops::bind(p, primals, params);
  if (derivatives_paused()) return out;
  const auto& rules = nx::ops::rules(p);
  const std::string_view api = nx::ops::info(p).api;
  if (!rules.jvp)
    nx::ops::internal_error("the jvp rule of " + std::string(api), "missing (a primitive without one is marked NoDiff)");
  return wrap(out, nx::ops::call_rule("jvp", api, [&] { return rules.jvp(p, primals, tangents, params, out); }));
}

std::vector<nx::Tensor> JvpTrace::process_construct(const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  const auto& rules = ir::construct_rules(eq.kind);
  if (derivatives_paused()) {
    std::vector<nx::Tensor> primals;
    for (const nx::Tensor& t : inputs) primals.push_back(primal_of(t));
    return ir::bind_construct(eq, primals, ir::entry_point(eq));
  }
  if (!rules.jvp) nx::ops::fail(entry_point(), std::string(rules.entry_point) + " has no derivative");
  return rules.jvp(*this, eq, inputs);
}

}  // namespace rune::ad
