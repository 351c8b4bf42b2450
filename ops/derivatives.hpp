// Helpers shared by the derivative rules (ops/derivatives_*.cpp).
//
// A tangent or cotangent held in an undefined handle is a symbolic zero:
// rules skip the work it would feed, and return undefined when every input
// of their result is zero. Rules are written with nx functions, so they run
// under whatever traces are active.
#pragma once

#include <span>

#include "ops/primitive.hpp"
#include "rune/nx.hpp"

namespace nx::ops {

inline bool zero(const Tensor& t) { return !t.defined(); }
// The tangent of a primitive with none (NoDiff: comparisons, argmax, ...): a
// symbolic zero.
inline Tensor no_tangent(Prim, std::span<const Tensor>, std::span<const Tensor>, const Params&, const Tensor&) {
  return {};
}
inline bool all_zero(std::span<const Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined()) return false;
  return true;
}

// a + b where either may be a symbolic zero.
Tensor add_tangents(const Tensor& a, const Tensor& b);
// t shown with `shape` (broadcast), unless t is a symbolic zero.
Tensor broadcast_tangent(const Tensor& t, const Shape& shape);
// The sum of ct over the axes along which `shape` was broadcast to ct's
// shape: the cotangent of an operand that was broadcast.
Tensor unbroadcast(const Tensor& ct, const Shape& shape);
// The sum of t over exactly `axes`: t itself over none. A rule's axes come
// from its bound equation, whose empty list names no axis (nx::sum would
// read it as every axis: a lane's 0-d value under vmap would lose its lane).
Tensor summed(const Tensor& t, const Axes& axes);
// A zero tangent made concrete (zeros of the type).
Tensor zeros_of(const TensorType& type);

}  // namespace nx::ops
