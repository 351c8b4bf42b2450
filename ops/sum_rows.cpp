#include "ops/sum_rows.hpp"

#include <algorithm>
#include <complex>

#include "ops/concrete.hpp"
#include "ops/kernels/loops.hpp"

namespace nx::ops {
namespace {

// The accumulators of a sum of dtype d (kernels::reduce_lanes: 128 bytes of them).
std::int64_t accumulators(DType d) {
  switch (size_of(d)) {
    case 16: return kernels::reduce_lanes<std::complex<double>>;
    case 8: return kernels::reduce_lanes<double>;
    default: return kernels::reduce_lanes<float>;
  }
}

void add_into(const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor operands[] = {a, b};
  rules(Prim::add).into(Prim::add, std::span<const Tensor>(operands), Params{}, out);
}

// Row k of `rows` (C order), a view.
Tensor row_of(const Tensor& rows, std::int64_t k) {
  const Shape shape(rows.shape().begin() + 1, rows.shape().end());
  return make_view(rows, shape, contiguous_strides(shape), k * numel(shape));
}

}  // namespace

void sum_rows_into(const Tensor& rows, const Tensor& out) {
  const DType dt = rows.dtype();
  const std::int64_t count = rows.shape()[0];
  if (dt == float16 || dt == bfloat16 || count == 0) {  // (accumulated in float32, rounded once: the reduction's own)
    Params params;
    params.axes = {0};
    return rules(Prim::reduce_sum).into(Prim::reduce_sum, std::span<const Tensor>(&rows, 1), params, out);
  }
  auto row = [&](std::int64_t k) { return row_of(rows, k); };
  const std::int64_t lanes = accumulators(dt);
  // Accumulator k folds rows k, k + L, k + 2L, ... in order (in row k).
  for (std::int64_t i = lanes; i < count; ++i) add_into(row(i % lanes), row(i), row(i % lanes));
  const std::int64_t used = std::min(count, lanes);  // (the others hold +0)
  for (std::int64_t half = lanes / 2; half >= 1; half /= 2)
    for (std::int64_t k = 0; k < half && k + half < used; ++k) add_into(row(k), row(k + half), row(k));
  // The accumulators start at +0, and 0 + x differs from x only for x = -0;
  // a sum is -0 only where every term is, which one add of +0 makes +0.
  add_into(row(0), filled(dt, {}, 0.), out);
}

void fold_rows_into(const Tensor& rows, const Tensor& acc) {
  for (std::int64_t k = 0; k < rows.shape()[0]; ++k) add_into(acc, row_of(rows, k), acc);
}

}  // namespace nx::ops
