// nx:: reductions: normalize the axes, bind the primitive, keep dims if asked;
// segment_sum, a scatter_add of rows into their segments.
#include <algorithm>

#include "ops/concrete.hpp"
#include "ops/sizes.hpp"
#include "ops/type_checks.hpp"
#include "rune/nx.hpp"

namespace nx {

using ops::Prim;

namespace {
void check_defined(std::string_view api, const Tensor& t) { ops::check_defined(api, std::span<const Tensor>(&t, 1)); }

Shape kept_shape(const Shape& in, const Axes& axes) {
  Shape out = in;
  for (auto a : axes) out[a] = 1;
  return out;
}

// The body of max, min, all and any (and of sum and prod, through
// accumulate): placed at their call.
Tensor reduce(Prim p, const Operand& t, const Axes& axes, bool keepdims) {
  const detail::Calling here(t.site());
  const std::string_view api = ops::info(p).api;
  check_defined(api, t);
  ops::Params params;
  params.axes = ops::normalize_axes(api, axes, t);
  Tensor r = ops::bind(p, {t}, params);
  return keepdims ? reshape(r, kept_shape(t.shape(), params.axes)) : r;
}

void require_inexact(std::string_view api, const Tensor& t) {
  check_defined(api, t);
  if (!is_inexact(t.dtype()))
    ops::fail(api, ops::describe(t) + " is not supported (it takes float or complex tensors)");
}
}  // namespace

namespace {
using ops::accumulation_dtype;

// sum or prod of t cast to `dtype` (its default: accumulation_dtype).
Tensor accumulate(Prim p, const Operand& t, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  const detail::Calling here(t.site());
  const std::string_view api = ops::info(p).api;
  check_defined(api, t);
  const DType target = dtype.value_or(accumulation_dtype(t.dtype()));
  ops::check_accepts(api, p, target, "dtype=" + std::string(name(target)));
  const Axes reduced = ops::normalize_axes(api, axes, t);  // (t's axes named in errors, not the cast's)
  return reduce(p, target == t.dtype() ? t.tensor() : cast(t, target), reduced, keepdims);
}

// 16-bit floats computed in float32 and rounded once at the end, as
// NumPy's mean: f of t's float32 copy, cast back (else f of t).
template <class F> Tensor in_float32(const Tensor& t, F f) {
  if (t.dtype() != float16 && t.dtype() != bfloat16) return f(t);
  return cast(f(cast(t, float32)), t.dtype());
}
}  // namespace

Tensor sum(Operand t, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  return accumulate(Prim::reduce_sum, t, axes, keepdims, dtype);
}
Tensor prod(Operand t, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  return accumulate(Prim::reduce_prod, t, axes, keepdims, dtype);
}
Tensor max(Operand t, const Axes& axes, bool keepdims) { return reduce(Prim::reduce_max, t, axes, keepdims); }
Tensor min(Operand t, const Axes& axes, bool keepdims) { return reduce(Prim::reduce_min, t, axes, keepdims); }
Tensor all(Operand t, const Axes& axes, bool keepdims) { return reduce(Prim::reduce_and, t, axes, keepdims); }
Tensor any(Operand t, const Axes& axes, bool keepdims) { return reduce(Prim::reduce_or, t, axes, keepdims); }

Tensor mean(Operand t, const Axes& axes, bool keepdims) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::mean");
  require_inexact("nx::mean", t);
  std::int64_t count = 1;
  for (auto a : ops::normalize_axes("nx::mean", axes, t)) count *= t.shape()[a];
  return in_float32(t, [&](const Tensor& x) { return div(sum(x, axes, keepdims), double(count)); });
}

namespace {
// log(sum(exp(t - m))) + m with m the maximum (0 where it is not finite), so
// that large entries do not overflow; of complex entries, the maximum of
// their real parts.
Tensor shifted_logsumexp(const Tensor& t, const Axes& axes, bool keepdims) {
  Axes reduced = ops::normalize_axes("nx::logsumexp", axes, t);
  const bool empty = std::any_of(reduced.begin(), reduced.end(), [&](auto d) { return t.shape()[d] == 0; });
  // Over no element the sum is 0 and the result -inf (a maximum has no identity).
  Tensor total = empty ? log(sum(exp(t), axes, true)) : [&] {
    const bool complex = is_complex(t.dtype());
    Tensor m = max(complex ? cast(t, t.dtype() == complex64 ? float32 : float64) : t, axes, true);
    Tensor shift = where(isfinite(m), m, 0.);
    if (complex) shift = cast(shift, t.dtype());
    return log(sum(exp(sub(t, shift)), axes, true)) + shift;
  }();
  if (keepdims) return total;
  Shape out;
  for (std::int64_t d = 0; d < t.ndim(); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) out.push_back(t.shape()[d]);
  return reshape(total, out);
}
}  // namespace

Tensor logsumexp(Operand t, const Axes& axes, bool keepdims) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::logsumexp");
  require_inexact("nx::logsumexp", t);
  return in_float32(t, [&](const Tensor& x) { return shifted_logsumexp(x, axes, keepdims); });
}

namespace {
Tensor arg(Prim p, const Tensor& t, std::int64_t axis) {
  const std::string_view api = ops::info(p).api;
  check_defined(api, t);
  ops::Params params;
  params.axis = ops::normalize_axis(api, axis, t.ndim(), t);
  return ops::bind(p, {t}, params);
}
}  // namespace

Tensor argmax(Operand t, std::int64_t axis) {
  const detail::Calling here(t.site());
  return arg(Prim::argmax, t, axis);
}
Tensor argmin(Operand t, std::int64_t axis) {
  const detail::Calling here(t.site());
  return arg(Prim::argmin, t, axis);
}

namespace {
// The shape of segment_sum's result, once its arguments are checked.
Shape segments_shape(const Tensor& data, const Tensor& ids, std::int64_t num_segments) {
  constexpr std::string_view api = "nx::segment_sum";
  check_defined(api, data);
  check_defined(api, ids);
  if (data.ndim() == 0) ops::fail(api, "the data must have rows, got the scalar " + ops::describe(data));
  ops::check_accepts(api, Prim::scatter_add, data);
  if (!is_integer(ids.dtype()))
    ops::fail(api, "the segment ids must be an integer tensor, got " + ops::describe(ids));
  if (ids.shape() != Shape{data.shape()[0]})
    ops::fail(api, "the segment ids must have shape " + to_string(Shape{data.shape()[0]}) + " (one per row of " +
                       ops::describe(data) + "), got " + ops::describe(ids));
  if (num_segments < 0) ops::fail(api, "num_segments must not be negative, got " + std::to_string(num_segments));
  Shape out = data.shape();
  out[0] = num_segments;
  ops::check_shape(api, out);
  return out;
}
}  // namespace

// A scatter_add of the rows into zeros that drops the rows whose id is
// outside [0, num_segments): one primitive, the ids read in their own dtype.
Tensor segment_sum(Operand data, const Tensor& segment_ids, std::int64_t num_segments) {
  const detail::Calling here(data.site());
  const ops::EntryPoint entry("nx::segment_sum");
  ops::Params p;
  p.mode = ops::IndexMode::drop;
  // (the shape first, in its own statement: it checks the operands, and the
  // order in which a call's arguments are evaluated differs by platform)
  const Shape shape = segments_shape(data, segment_ids, num_segments);
  const Tensor segments = zeros(data.dtype(), shape);
  return ops::bind(Prim::scatter_add, {segments, segment_ids, data}, p);
}

}  // namespace nx
