// Derivative rules of the reductions. The maximum (minimum) shares its
// derivative equally among the elements that tie for it; the product's
// derivative is exact when elements are zero.
#include "ops/derivatives.hpp"

namespace nx::ops {
namespace {

// The result reshaped with the reduced axes kept (length 1), so it
// broadcasts against the operand.
Tensor kept(const Tensor& reduced, const Shape& operand_shape, const Axes& axes) {
  Shape shape = operand_shape;
  for (auto a : axes) shape[a] = 1;
  return reshape(reduced, shape);
}

// The product of the other elements of each reduced group, for each element.
Tensor product_of_others(const Tensor& x, const Tensor& y, const Axes& axes) {
  Tensor is_zero = equal(x, 0.);
  Tensor zeros_in_group = kept(sum(cast(is_zero, x.dtype()), axes), x.shape(), axes);
  Tensor nonzero_product = kept(prod(where(is_zero, 1., x), axes), x.shape(), axes);
  Tensor lone_zero = logical_and(is_zero, equal(zeros_in_group, 1.));
  return where(equal(zeros_in_group, 0.), kept(y, x.shape(), axes) / x,
               where(lone_zero, nonzero_product, zeros_like(x)));
}

Tensor reduce_jvp(Prim p, std::span<const Tensor> x, std::span<const Tensor> t, const Params& params, const Tensor& y) {
  if (zero(t[0])) return Tensor();
  const Axes& axes = params.axes;
  switch (p) {
    case Prim::reduce_sum: return sum(t[0], axes);
    case Prim::reduce_prod: return sum(t[0] * product_of_others(x[0], y, axes), axes);
    case Prim::reduce_max:
    case Prim::reduce_min: {
      Tensor ties = cast(equal(x[0], kept(y, x[0].shape(), axes)), x[0].dtype());
      return sum(t[0] * ties, axes) / sum(ties, axes);
    }
    default: return Tensor();
  }
}

void reduce_sum_transpose(Prim, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType> types,
                          const Params& params, std::span<Tensor> cts) {
  cts[0] = broadcast_to(kept(ct, types[0].shape, params.axes), types[0].shape);
}

}  // namespace

void register_reduction_derivatives(Rules* table) {
  for (Prim p : {Prim::reduce_sum, Prim::reduce_prod, Prim::reduce_max, Prim::reduce_min}) table[int(p)].jvp = &reduce_jvp;
  table[int(Prim::reduce_sum)].transpose = &reduce_sum_transpose;
  for (Prim p : {Prim::reduce_and, Prim::reduce_or, Prim::argmax, Prim::argmin}) table[int(p)].jvp = table[int(Prim::less)].jvp;
}

}  // namespace nx::ops
