// Derivative rules of the reductions. The maximum (minimum) shares its
// derivative equally among the elements that tie for it; the product's
// derivative is exact when elements are zero.
#include "ops/derivatives.hpp"

#include <algorithm>

namespace nx::ops {
namespace {

// The result reshaped with the reduced axes kept (length 1), so it
// broadcasts against the operand.
Tensor kept(const Tensor& reduced, const Shape& operand_shape, const Axes& axes) {
  Shape shape = operand_shape;
  for (auto a : axes) shape[a] = 1;
  return reshape(reduced, shape);
}

// x's rows along its last axis shifted right by `by` places, ones coming in.
Tensor shifted_right(const Tensor& x, std::int64_t by) {
  const std::int64_t n = x.shape().back();
  Shape starts(std::size_t(x.ndim()), 0), stops = x.shape();
  stops.back() = n - by;
  std::vector<std::pair<std::int64_t, std::int64_t>> widths(std::size_t(x.ndim()), {0, 0});
  widths.back() = {by, 0};
  return pad(slice(x, starts, stops), widths, 1.);
}

// The product of the elements before each one along the last axis (1 for
// the first): a prefix product in log2(n) rounds of shifted products.
Tensor products_before(const Tensor& x) {
  const std::int64_t n = x.shape().back();
  Tensor inclusive = x;
  for (std::int64_t by = 1; by < n; by *= 2) inclusive = inclusive * shifted_right(inclusive, by);
  return n > 0 ? shifted_right(inclusive, 1) : x;
}

// The product of the other elements of each reduced group, for each element,
// as (product before) * (product after): no division, so it is exact at
// zeros and so are its own derivatives (second order of prod).
Tensor product_of_others(const Tensor& x, const Axes& axes) {
  Axes perm;  // the kept axes, then the reduced ones
  for (std::int64_t d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d);
  perm.insert(perm.end(), axes.begin(), axes.end());
  Tensor moved = transpose(x, perm);
  Shape rows(moved.shape().begin(), moved.shape().end() - std::ptrdiff_t(axes.size()));
  std::int64_t group = 1;
  for (auto a : axes) group *= x.shape()[a];
  rows.push_back(group);
  Tensor groups = reshape(moved, rows);
  Tensor others = products_before(groups) * flip(products_before(flip(groups, {-1})), {-1});
  Axes inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[std::size_t(perm[i])] = std::int64_t(i);
  return transpose(reshape(others, moved.shape()), inverse);
}

Tensor reduce_jvp(Prim p, std::span<const Tensor> x, std::span<const Tensor> t, const Params& params, const Tensor& y) {
  if (zero(t[0])) return Tensor();
  const Axes& axes = params.axes;
  switch (p) {
    case Prim::reduce_sum: return summed(t[0], axes);
    case Prim::reduce_prod: return summed(t[0] * product_of_others(x[0], axes), axes);
    case Prim::reduce_max:
    case Prim::reduce_min: {
      // (a NaN result is the NaN elements' value: they share its derivative)
      const Tensor result = kept(y, x[0].shape(), axes);
      Tensor ties = cast(logical_or(equal(x[0], result), logical_and(isnan(x[0]), isnan(result))), x[0].dtype());
      return summed(t[0] * ties, axes) / summed(ties, axes);
    }
    default: return Tensor();
  }
}

void reduce_sum_transpose(Prim, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType> types,
                          const Params& params, std::span<Tensor> cts) {
  cts[0] = broadcast_to(kept(ct, types[0].shape, params.axes), types[0].shape);
}

}  // namespace

void register_reduction_derivatives(RuleTable& table) {
  for (Prim p : {Prim::reduce_sum, Prim::reduce_prod, Prim::reduce_max, Prim::reduce_min}) table.define(p, {.jvp = &reduce_jvp});
  table.define(Prim::reduce_sum, {.transpose = &reduce_sum_transpose});
  for (Prim p : {Prim::reduce_and, Prim::reduce_or, Prim::argmax, Prim::argmin}) table.define(p, {.jvp = &no_tangent});
}

}  // namespace nx::ops
