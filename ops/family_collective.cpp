// Collectives over the lanes of a named map (rune::lanes and its
// transpose): their type, derivative and transpose rules. They have no
// eager or batching rule of their own: only the map they name computes them
// (batch/batch_trace.cpp); with no such map running they throw.
//
//   lanes_gather(x): [count, x's shape...], every lane's x (JAX's all_gather)
//   lanes_sum(y):    y's shape without its axis 0, whose count is the lanes';
//                    lane i gets the sum over the lanes j of row i of lane
//                    j's y (the transpose of the gather: a reduce-scatter)
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "ops/errors.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {
namespace {

TensorType gather_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  Shape shape = x[0].shape();
  shape.insert(shape.begin(), params.shape.at(0));
  return {x[0].dtype(), shape, x[0].placement()};
}

TensorType sum_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  if (x[0].ndim() == 0 || x[0].shape()[0] != params.shape.at(0))
    fail(info(p).api, "a transposed gather takes one row per lane (" + std::to_string(params.shape.at(0)) +
                          "), got " + describe(x[0]));
  return {x[0].dtype(), Shape(x[0].shape().begin() + 1, x[0].shape().end()), x[0].placement()};
}

[[noreturn]] Tensor no_map(Prim p, std::span<const Tensor>, const Params&, const TensorType&) {
  fail(info(p).api, "no map of this axis is running (name one with rune::vmap(f, axis))");
}

Tensor gather_jvp(Prim, std::span<const Tensor>, std::span<const Tensor> t, const Params& params, const Tensor&) {
  return zero(t[0]) ? Tensor() : bind(Prim::lanes_gather, {t[0]}, params);
}
void gather_transpose(Prim, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType>,
                      const Params& params, std::span<Tensor> cts) {
  cts[0] = bind(Prim::lanes_sum, {ct}, params);
}

Tensor sum_jvp(Prim, std::span<const Tensor>, std::span<const Tensor> t, const Params& params, const Tensor&) {
  return zero(t[0]) ? Tensor() : bind(Prim::lanes_sum, {t[0]}, params);
}
void sum_transpose(Prim, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType>, const Params& params,
                   std::span<Tensor> cts) {
  cts[0] = bind(Prim::lanes_gather, {ct}, params);
}

}  // namespace

void register_collectives(Rules* table) {
  table[int(Prim::lanes_gather)] = {&gather_type, &no_map, &gather_jvp, &gather_transpose};
  table[int(Prim::lanes_sum)] = {&sum_type, &no_map, &sum_jvp, &sum_transpose};
}

}  // namespace nx::ops
