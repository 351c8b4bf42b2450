// Collectives over the lanes of a named map (rune::lanes and its
// transpose): their type, derivative and transpose rules. They have no
// eager or batching rule of their own: only the map they name computes them
// (batch/batch_trace.cpp); with no such map running, bind throws the user's
// error (ops/primitive.cpp).
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

// The lane count of the map a collective names (params.axis), which its
// params give as shape=[count]: checked, since program text may give anything.
std::int64_t lane_count(Prim p, const Params& params) {
  if (params.axis < 1) fail(info(p).api, "axis=" + std::to_string(params.axis) + " names no map");
  if (params.shape.size() != 1 || params.shape[0] < 0)
    fail(info(p).api, "the lane count is shape=[count], got shape=" + to_string(params.shape));
  return params.shape[0];
}

TensorType gather_type(Prim p, std::span<const Tensor> x, const Params& params) {
  return gathered_type(p, x[0], lane_count(p, params));
}
TensorType sum_type(Prim p, std::span<const Tensor> x, const Params& params) {
  return row_sum_type(p, x[0], lane_count(p, params), "lane");
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

void register_collectives(RuleTable& table) {
  // (no eager rule: bind refuses them where no map computes them)
  table.define(Prim::lanes_gather, {.type = &gather_type, .jvp = &gather_jvp, .transpose = &gather_transpose});
  table.define(Prim::lanes_sum, {.type = &sum_type, .jvp = &sum_jvp, .transpose = &sum_transpose});
}

}  // namespace nx::ops
