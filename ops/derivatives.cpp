#include "ops/derivatives.hpp"

namespace nx::ops {

Tensor add_tangents(const Tensor& a, const Tensor& b) {
  if (zero(a)) return b;
  if (zero(b)) return a;
  return a + b;
}

Tensor broadcast_tangent(const Tensor& t, const Shape& shape) {
  return zero(t) || t.shape() == shape ? t : broadcast_to(t, shape);
}

Tensor unbroadcast(const Tensor& ct, const Shape& shape) {
  if (zero(ct) || ct.shape() == shape) return ct;
  const std::size_t extra = ct.shape().size() - shape.size();
  Axes axes;
  for (std::size_t d = 0; d < ct.shape().size(); ++d)
    if (d < extra || (shape[d - extra] == 1 && ct.shape()[d] != 1)) axes.push_back(std::int64_t(d));
  return reshape(summed(ct, axes), shape);
}

Tensor summed(const Tensor& t, const Axes& axes) {
  if (axes.empty()) return t;
  Params params;
  params.axes = axes;
  return bind(Prim::reduce_sum, {t}, params);
}

Tensor zeros_of(const TensorType& type) { return zeros(type.dtype, type.shape); }

}  // namespace nx::ops
