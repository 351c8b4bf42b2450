// nx:: elementwise functions: each checks nothing itself and binds its
// primitive (the primitive's type rule checks); composites are written with
// primitives so every transformation sees through them.
#include <optional>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/kernels/iterate.hpp"
#include "ops/kernels/kernels.hpp"
#include "ops/kernels/loops.hpp"
#include "ops/nan_hunt.hpp"
#include "ops/primitive.hpp"
#include "ops/trace.hpp"
#include "ops/type_checks.hpp"
#include "rune/nx.hpp"

namespace nx {

using ops::bind;
using ops::Prim;

namespace {
// `value` as a scalar of t's dtype, for the double side of a binary op.
Tensor scalar_like(std::string_view api, const Tensor& t, double value) {
  if (!t.defined()) ops::fail(api, "operand holds no value (it was default-constructed)");
  return scalar(t.dtype(), value);
}

// t + value, t * value, value - t, ... of + - * / on a float32 or float64
// tensor in C order, concrete, of fewer elements than run on threads, outside
// any trace and any NaN hunt: the eager rule's row loop straight on t and value converted to
// t's dtype, without making value a tensor (W1 in bench/: that was a fifth
// of a small op). The bits, dtype and shape are the primitive's. Nothing
// otherwise (the caller binds the primitive).
std::optional<Tensor> with_double(Prim p, const Tensor& t, double value, bool value_first) {
  if (p != Prim::add && p != Prim::sub && p != Prim::mul && p != Prim::div) return std::nullopt;
  const detail::TensorImpl* impl = t.impl();
  if (!impl || impl->tracer || !impl->storage || ops::trace_depth() != 0 || ops::hunting_nans()) return std::nullopt;
  if ((impl->dtype != float64 && impl->dtype != float32) || !(impl->placement == Placement::host()) ||
      impl->storage->donated.load(std::memory_order_relaxed) || !ops::is_contiguous(*impl))
    return std::nullopt;
  const std::int64_t n = numel(impl->shape);
  if (n >= ops::parallel_grain) return std::nullopt;
  union {
    double f64;
    float f32;
  } element;
  if (impl->dtype == float64) element.f64 = ops::kernels::convert_value<double>(value);
  else element.f32 = ops::kernels::convert_value<float>(value);
  Tensor out = ops::make_tensor(impl->dtype, impl->shape);
  const auto row = ops::kernels::table().binary[int(p)][int(impl->dtype)];
  const char* at = ops::base_address(*impl);
  if (value_first) row(n, &element, 0, at, 1, ops::base_address(*out.impl()));
  else row(n, at, 1, &element, 0, ops::base_address(*out.impl()));
  return out;
}
}  // namespace

// Every unary primitive of the table (ops/primitives.def) is the nx function
// of its name: NX_IF_UNARY(kind) keeps its arguments for that family alone.
#define NX_IF_UNARY(kind) NX_IF_UNARY_##kind
#define NX_IF_UNARY_unary(...) __VA_ARGS__
#define NX_IF_UNARY_binary(...)
#define NX_IF_UNARY_select(...)
#define NX_IF_UNARY_convert(...)
#define NX_IF_UNARY_reduce(...)
#define NX_IF_UNARY_arg(...)
#define NX_IF_UNARY_layout(...)
#define NX_IF_UNARY_linalg(...)
#define NX_IF_UNARY_random(...)
#define NX_IF_UNARY_ranks(...)
#define NX_IF_UNARY_collective(...)
#define PRIM(id, api, kind, arity, accepts, result, flags) \
  NX_IF_UNARY(kind)(Tensor id(Operand x) {                 \
    const detail::Calling here(x.site());                  \
    return bind(Prim::id, {x});                            \
  })
#include "ops/primitives.def"
#undef PRIM

// A binary primitive of two tensors, and with a double on one side: the
// double made a scalar of the tensor's dtype (or straight into the row loop:
// with_double, which needs no place). The operators call these, not nx::add
// and the like, so that an operator is one call (W1).
namespace {
Tensor binary(Prim p, const Operand& a, const Tensor& b) {
  const detail::Calling here(a.site());
  return bind(p, {a, b});
}
// (the slow paths of the double forms, out of line: W1's fast path stays
// short)
[[gnu::noinline]] Tensor bind_with_double(Prim p, std::string_view api, const Operand& t, double value,
                                          bool value_first) {
  const detail::Calling here(t.site());
  const Tensor scalar = scalar_like(api, t, value);
  return value_first ? bind(p, {scalar, t}) : bind(p, {t, scalar});
}
// t with a double: with_double's fast path inline, else the primitive bound.
[[gnu::always_inline]] inline Tensor with_double_or_bind(Prim p, std::string_view api, const Operand& t, double value,
                                                         bool value_first) {
  if (std::optional<Tensor> fast = with_double(p, t, value, value_first)) return std::move(*fast);
  return bind_with_double(p, api, t, value, value_first);
}
}  // namespace

#define NX_DEFINE_BINARY(f)                                                                                          \
  Tensor f(Operand a, const Tensor& b) { return binary(Prim::f, a, b); }                                             \
  Tensor f(Operand a, double b) { return with_double_or_bind(Prim::f, "nx::" #f, a, b, false); }                     \
  Tensor f(double a, Operand b) { return with_double_or_bind(Prim::f, "nx::" #f, b, a, true); }
NX_BINARY_FUNCTIONS(NX_DEFINE_BINARY)
#undef NX_DEFINE_BINARY

#define NX_DEFINE_OPERATOR(op, f)                                                                                    \
  Tensor operator op(Operand a, const Tensor& b) { return binary(Prim::f, a, b); }                                   \
  Tensor operator op(Operand a, double b) { return with_double_or_bind(Prim::f, "nx::" #f, a, b, false); }           \
  Tensor operator op(double a, Operand b) { return with_double_or_bind(Prim::f, "nx::" #f, b, a, true); }            \
  /* The handle is bound to the new value; other handles keep the old one. */                                        \
  Tensor& operator op##=(Assigned a, const Tensor& b) {                                                              \
    return a.tensor() = binary(Prim::f, Operand(a.tensor(), a.site()), b);                                           \
  }                                                                                                                  \
  Tensor& operator op##=(Assigned a, double b) {                                                                     \
    return a.tensor() = with_double_or_bind(Prim::f, "nx::" #f, Operand(a.tensor(), a.site()), b, false);            \
  }
NX_DEFINE_OPERATOR(+, add) NX_DEFINE_OPERATOR(-, sub) NX_DEFINE_OPERATOR(*, mul) NX_DEFINE_OPERATOR(/, div)
#undef NX_DEFINE_OPERATOR
Tensor operator-(Operand a) {
  const detail::Calling here(a.site());
  return bind(Prim::neg, {a});
}

// ---- composites (each names itself in the errors of its parts: ops::EntryPoint)
// (checks its operand first: div would describe the 1 it made)
Tensor recip(Operand operand) {
  const detail::Calling here(operand.site());
  const Tensor& x = operand;
  const ops::EntryPoint entry("nx::recip");
  ops::check_defined("nx::recip", std::span<const Tensor>(&x, 1));
  ops::check_accepts("nx::recip", Prim::div, x);
  return div(1., x);
}
Tensor square(Operand x) {
  const detail::Calling here(x.site());
  const ops::EntryPoint entry("nx::square");
  return mul(x, x);
}
// 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) in (0, 1]:
// nothing overflows, so neither the value nor its derivative meets inf
// (1 / (1 + exp(-x)) has the derivative 0 * inf = NaN below -710). -|x| is
// chosen with a `where`, so that the derivative at 0 is -x's (abs's is 0
// there). Complex values have no order: 1 / (1 + exp(-x)).
Tensor sigmoid(Operand operand) {
  const detail::Calling here(operand.site());
  const Tensor& x = operand;
  const ops::EntryPoint entry("nx::sigmoid");
  ops::check_defined("nx::sigmoid", std::span<const Tensor>(&x, 1));
  ops::check_accepts("nx::sigmoid", Prim::exp, x);
  if (is_complex(x.dtype())) return div(1., add(exp(neg(x)), 1.));
  const Tensor at_least_zero = greater_equal(x, 0.);
  const Tensor e = exp(where(at_least_zero, neg(x), x));
  return div(where(at_least_zero, 1., e), add(e, 1.));
}

Tensor where(Operand cond, const Tensor& a, const Tensor& b) {
  const detail::Calling here(cond.site());
  return bind(Prim::select, {cond, a, b});
}
Tensor where(Operand cond, const Tensor& a, double b) {
  const detail::Calling here(cond.site());
  return where(cond, a, scalar_like("nx::where", a, b));
}
Tensor where(Operand cond, double a, const Tensor& b) {
  const detail::Calling here(cond.site());
  return where(cond, scalar_like("nx::where", b, a), b);
}

Tensor cast(Operand t, DType dtype) {
  const detail::Calling here(t.site());
  ops::Params p;
  p.dtype = dtype;
  return bind(Prim::convert, {t}, p);
}

Tensor clamp(Operand t, const Tensor& lo, const Tensor& hi) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::clamp");
  return minimum(maximum(t, lo), hi);
}
Tensor clamp(Operand t, double lo, double hi) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::clamp");
  return clamp(t, scalar_like("nx::clamp", t, lo), scalar_like("nx::clamp", t, hi));
}

Tensor place(const Placement& placement, Operand operand) {
  const detail::Calling here(operand.site());
  const Tensor& t = operand;
  if (!t.defined()) ops::fail("nx::place", "the tensor holds no value (it was default-constructed)");
  if (placement != t.placement()) ops::fail("nx::place", "only the host placement exists");
  return t;
}

}  // namespace nx
