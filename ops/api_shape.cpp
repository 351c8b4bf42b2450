// nx:: shape functions: normalize arguments as NumPy does, then bind layout
// primitives; expand_dims, squeeze, moveaxis, flatten, stack and get are
// composites of them.
#include <algorithm>

#include "ops/concrete.hpp"
#include "ops/sizes.hpp"
#include "ops/type_checks.hpp"
#include "rune/nx.hpp"

namespace nx {

using ops::bind;
using ops::Params;
using ops::Prim;

namespace {
void check_defined(std::string_view api, const Tensor& t) { ops::check_defined(api, std::span<const Tensor>(&t, 1)); }
}  // namespace

Tensor reshape(Operand t, const Shape& shape) {
  const detail::Calling here(t.site());
  check_defined("nx::reshape", t);
  Params p;
  p.shape = shape;
  auto unknown = std::count(shape.begin(), shape.end(), -1);
  if (unknown > 1) ops::fail("nx::reshape", "more than one -1 in " + to_string(shape));
  if (unknown == 1) {
    std::optional<std::int64_t> known = 1;
    for (auto d : shape)
      if (d != -1 && known) known = ops::multiply_lengths(*known, d);
    if (!known || *known == 0 || t.numel() % *known != 0)
      ops::fail("nx::reshape", "cannot reshape " + ops::describe(t) + " (" + std::to_string(t.numel()) +
                                   " elements) into " + to_string(shape));
    *std::find(p.shape.begin(), p.shape.end(), -1) = t.numel() / *known;
  }
  if (p.shape == t.shape()) return t;
  return bind(Prim::reshape, {t}, p);
}

Tensor transpose(Operand t, const Axes& perm) {
  const detail::Calling here(t.site());
  check_defined("nx::transpose", t);
  Params p;
  if (perm.empty())
    for (std::int64_t i = t.ndim(); i-- > 0;) p.axes.push_back(i);
  else
    for (auto a : perm) p.axes.push_back(a < 0 ? a + t.ndim() : a);
  return bind(Prim::transpose, {t}, p);
}

Tensor broadcast_to(Operand t, const Shape& shape) {
  const detail::Calling here(t.site());
  check_defined("nx::broadcast_to", t);
  if (t.shape() == shape) return t;
  Params p;
  p.shape = shape;
  return bind(Prim::broadcast, {t}, p);
}

Tensor expand_dims(Operand t, const Axes& axes) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::expand_dims");
  check_defined("nx::expand_dims", t);
  const std::int64_t n = t.ndim() + std::int64_t(axes.size());
  Axes at;
  for (auto a : axes) {
    if (a < -n || a >= n)
      ops::fail("nx::expand_dims", "axis " + std::to_string(a) + " is out of range for a result of rank " + std::to_string(n));
    at.push_back(a < 0 ? a + n : a);
  }
  std::sort(at.begin(), at.end());
  if (std::adjacent_find(at.begin(), at.end()) != at.end())
    ops::fail("nx::expand_dims", "an axis is repeated in " + to_string(axes));
  Shape shape;
  std::size_t src = 0;
  for (std::int64_t d = 0; d < n; ++d)
    shape.push_back(std::binary_search(at.begin(), at.end(), d) ? 1 : t.shape()[src++]);
  return reshape(t, shape);
}

Tensor squeeze(Operand t, const Axes& axes) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::squeeze");
  check_defined("nx::squeeze", t);
  Axes drop;
  if (axes.empty()) {
    for (std::int64_t d = 0; d < t.ndim(); ++d)
      if (t.shape()[d] == 1) drop.push_back(d);
  } else {
    drop = ops::normalize_axes("nx::squeeze", axes, t);
    for (auto d : drop)
      if (t.shape()[d] != 1)
        ops::fail("nx::squeeze", "axis " + std::to_string(d) + " of " + ops::describe(t) + " has length " +
                                     std::to_string(t.shape()[d]) + ", not 1");
  }
  Shape shape;
  for (std::int64_t d = 0; d < t.ndim(); ++d)
    if (!std::binary_search(drop.begin(), drop.end(), d)) shape.push_back(t.shape()[d]);
  return reshape(t, shape);
}

Tensor moveaxis(Operand t, std::int64_t from, std::int64_t to) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::moveaxis");
  check_defined("nx::moveaxis", t);
  from = ops::normalize_axis("nx::moveaxis", from, t.ndim(), t);
  to = ops::normalize_axis("nx::moveaxis", to, t.ndim(), t);
  Axes perm;
  for (std::int64_t d = 0; d < t.ndim(); ++d)
    if (d != from) perm.push_back(d);
  perm.insert(perm.begin() + to, from);
  return transpose(t, perm);
}

Tensor flatten(Operand t) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::flatten");
  check_defined("nx::flatten", t);
  return reshape(t, {t.numel()});
}

Tensor concatenate(Operands operands, std::int64_t axis) {
  const detail::Calling here(operands.site());
  const std::vector<Tensor>& ts = operands;
  if (ts.empty()) ops::fail("nx::concatenate", "no tensors to concatenate");
  ops::check_defined("nx::concatenate", ts);
  if (ts[0].ndim() == 0) ops::fail("nx::concatenate", "cannot concatenate scalars (use nx::stack)");
  Params p;
  p.axis = ops::normalize_axis("nx::concatenate", axis, ts[0].ndim(), ts[0]);
  if (ts.size() == 1) return ts[0];
  return bind(Prim::concatenate, ts, p);
}

Tensor stack(Operands operands, std::int64_t axis) {
  const detail::Calling here(operands.site());
  const std::vector<Tensor>& ts = operands;
  const ops::EntryPoint entry("nx::stack");
  if (ts.empty()) ops::fail("nx::stack", "no tensors to stack");
  ops::check_defined("nx::stack", ts);
  for (const Tensor& t : ts)
    if (t.shape() != ts[0].shape())
      ops::fail("nx::stack", "shapes " + to_string(ts[0].shape()) + " and " + to_string(t.shape()) + " differ");
  const std::int64_t n = ts[0].ndim() + 1;
  if (axis < -n || axis >= n)
    ops::fail("nx::stack", "axis " + std::to_string(axis) + " is out of range for a result of rank " + std::to_string(n));
  std::vector<Tensor> rows;
  for (const Tensor& t : ts) rows.push_back(expand_dims(t, {axis}));
  return concatenate(rows, axis);
}

Tensor pad(Operand t, const std::vector<std::pair<std::int64_t, std::int64_t>>& widths, double value) {
  const detail::Calling here(t.site());
  check_defined("nx::pad", t);
  if (std::int64_t(widths.size()) != t.ndim())
    ops::fail("nx::pad", "expected " + std::to_string(t.ndim()) + " (before, after) widths for " + ops::describe(t) +
                             ", got " + std::to_string(widths.size()));
  Params p;
  for (auto [lo, hi] : widths) p.lo.push_back(lo), p.hi.push_back(hi);
  p.value = value;
  return bind(Prim::pad, {t}, p);
}

Tensor flip(Operand t, const Axes& axes) {
  const detail::Calling here(t.site());
  check_defined("nx::flip", t);
  Params p;
  p.axes = ops::normalize_axes("nx::flip", axes, t);
  return bind(Prim::flip, {t}, p);
}

// Python slicing per axis: negative positions count from the end and
// positions are clamped into the axis; steps are positive; axes beyond the
// given ones are kept whole.
Tensor slice(Operand t, const Shape& starts, const Shape& stops, const Shape& steps) {
  const detail::Calling here(t.site());
  check_defined("nx::slice", t);
  if (starts.size() != stops.size() || (!steps.empty() && steps.size() != starts.size()) ||
      std::int64_t(starts.size()) > t.ndim())
    ops::fail("nx::slice", "starts " + to_string(starts) + ", stops " + to_string(stops) + " and steps " +
                               to_string(steps) + " do not match " + ops::describe(t));
  Params p;
  for (std::int64_t d = 0; d < t.ndim(); ++d) {
    const std::int64_t n = t.shape()[d];
    std::int64_t a = 0, b = n, s = 1;
    if (d < std::int64_t(starts.size())) {
      auto position = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
      a = position(starts[d]);
      b = std::max(a, position(stops[d]));
      s = steps.empty() ? 1 : steps[d];
      if (s < 1)
        ops::fail("nx::slice", "step " + std::to_string(s) + " along axis " + std::to_string(d) +
                                   " is not positive (reverse with nx::flip)");
    }
    p.starts.push_back(a), p.stops.push_back(b), p.steps.push_back(s);
  }
  return bind(Prim::slice, {t}, p);
}

Tensor get(Operand t, std::int64_t i) {
  const detail::Calling here(t.site());
  const ops::EntryPoint entry("nx::get");
  check_defined("nx::get", t);
  if (t.ndim() == 0) ops::fail("nx::get", "a scalar " + ops::describe(t) + " has no rows");
  const std::int64_t n = t.shape()[0];
  if (i < -n || i >= n)
    ops::fail("nx::get", "row " + std::to_string(i) + " is out of range for " + ops::describe(t));
  if (i < 0) i += n;
  Shape rest(t.shape().begin() + 1, t.shape().end());
  return reshape(slice(t, {i}, {i + 1}), rest);
}

Tensor take(Operand t, const Tensor& indices, std::int64_t axis) {
  const detail::Calling here(t.site());
  check_defined("nx::take", t);
  check_defined("nx::take", indices);
  if (t.ndim() == 0) ops::fail("nx::take", "cannot take from a scalar " + ops::describe(t));
  Params p;
  p.axis = ops::normalize_axis("nx::take", axis, t.ndim(), t);
  return bind(Prim::take, {t, indices}, p);
}

Tensor scatter_add(Operand target, const Tensor& indices, const Tensor& updates, std::int64_t axis) {
  const detail::Calling here(target.site());
  check_defined("nx::scatter_add", target);
  if (target.ndim() == 0) ops::fail("nx::scatter_add", "cannot scatter into a scalar " + ops::describe(target));
  Params p;
  p.axis = ops::normalize_axis("nx::scatter_add", axis, target.ndim(), target);
  return bind(Prim::scatter_add, {target, indices, updates}, p);
}

Tensor dynamic_slice(Operand t, const Tensor& starts, const Shape& sizes) {
  const detail::Calling here(t.site());
  Params p;
  p.shape = sizes;
  return bind(Prim::dynamic_slice, {t, starts}, p);
}

Tensor dynamic_update_slice(Operand t, const Tensor& update, const Tensor& starts) {
  const detail::Calling here(t.site());
  return bind(Prim::dynamic_update_slice, {t, update, starts});
}

}  // namespace nx
