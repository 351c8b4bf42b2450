// Derivative rules of the layout primitives. Each is linear in its data
// operands: its tangent is the same primitive applied to their tangents, and
// its transpose moves cotangents back where the elements came from.
#include "ops/derivatives.hpp"

namespace nx::ops {
namespace {

// The same primitive over the tangents of the data operands (zeros made
// concrete where some, not all, are zero), with the index operands as they are.
Tensor linear_jvp(Prim p, std::span<const Tensor> x, std::span<const Tensor> t, const Params& params, const Tensor&) {
  auto data = [p](std::size_t i) {  // which operands carry data (not indices)
    if (p == Prim::take || p == Prim::dynamic_slice) return i == 0;
    if (p == Prim::dynamic_update_slice) return i < 2;
    if (p == Prim::scatter_add) return i != 1;
    return true;
  };
  bool any = false;
  for (std::size_t i = 0; i < x.size(); ++i) any = any || (data(i) && !zero(t[i]));
  if (!any) return Tensor();
  std::vector<Tensor> operands;
  for (std::size_t i = 0; i < x.size(); ++i)
    operands.push_back(!data(i) ? x[i] : zero(t[i]) ? zeros_like(x[i]) : t[i]);
  Params tangent_params = params;
  tangent_params.value = 0;  // pad: the fill value is a constant
  return bind(p, operands, tangent_params);
}

Axes inverse(const Axes& perm) {
  Axes inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[std::size_t(perm[i])] = std::int64_t(i);
  return inv;
}

Tensor padded(const Tensor& ct, const Shape& lo, const Shape& hi, const Shape& interior) {
  Params p;
  p.lo = lo, p.hi = hi, p.interior = interior;
  return bind(Prim::pad, {ct}, p);
}

Tensor sliced(const Tensor& ct, const Shape& starts, const Shape& stops, const Shape& steps) {
  Params p;
  p.starts = starts, p.stops = stops, p.steps = steps;
  return bind(Prim::slice, {ct}, p);
}

// A strided slice's elements go back with zeros around and between them.
Tensor slice_transpose(const Tensor& ct, const TensorType& in, const Params& s) {
  Shape lo, hi, interior;
  for (std::size_t d = 0; d < in.shape.size(); ++d) {
    const std::int64_t n = ct.shape()[d];
    const std::int64_t last = n > 0 ? s.starts[d] + (n - 1) * s.steps[d] + 1 : s.starts[d];
    lo.push_back(s.starts[d]);
    hi.push_back(in.shape[d] - last);
    interior.push_back(s.steps[d] - 1);
  }
  return padded(ct, lo, hi, interior);
}

// A pad's operand elements are every (interior + 1)-th past the low edge.
Tensor pad_transpose(const Tensor& ct, const TensorType& in, const Params& p) {
  Shape starts, stops, steps;
  for (std::size_t d = 0; d < in.shape.size(); ++d) {
    const std::int64_t step = (p.interior.empty() ? 0 : p.interior[d]) + 1, n = in.shape[d];
    starts.push_back(p.lo[d]);
    stops.push_back(n > 0 ? p.lo[d] + (n - 1) * step + 1 : p.lo[d]);
    steps.push_back(step);
  }
  return sliced(ct, starts, stops, steps);
}

void layout_transpose(Prim p, const Tensor& ct, std::span<const Tensor> x, std::span<const TensorType> types,
                      const Params& params, std::span<Tensor> cts) {
  const TensorType& in = types[0];
  switch (p) {
    case Prim::reshape: cts[0] = reshape(ct, in.shape); break;
    case Prim::transpose: cts[0] = transpose(ct, inverse(params.axes)); break;
    case Prim::broadcast: cts[0] = unbroadcast(ct, in.shape); break;
    case Prim::flip: cts[0] = bind(p, {ct}, params); break;  // (its own transpose; no axes flip none)
    case Prim::slice: cts[0] = slice_transpose(ct, in, params); break;
    case Prim::pad: cts[0] = pad_transpose(ct, in, params); break;
    case Prim::concatenate: {
      std::int64_t at = 0;
      for (std::size_t i = 0; i < types.size(); ++i) {
        const std::int64_t n = types[i].shape[params.axis];
        if (zero(x[i])) {
          Shape starts(ct.shape().size(), 0), stops = ct.shape(), steps(ct.shape().size(), 1);
          starts[params.axis] = at, stops[params.axis] = at + n;
          cts[i] = sliced(ct, starts, stops, steps);
        }
        at += n;
      }
      break;
    }
    case Prim::take: {  // (an index's mode is its transpose's: drop mode's zeros take nothing back)
      Params q;
      q.axis = params.axis, q.mode = params.mode;
      cts[0] = bind(Prim::scatter_add, {zeros_of(in), x[1], ct}, q);
      break;
    }
    case Prim::scatter_add:
      if (zero(x[0])) cts[0] = ct;
      if (zero(x[2])) {
        Params q;
        q.axis = params.axis, q.mode = params.mode;
        cts[2] = bind(Prim::take, {ct, x[1]}, q);
      }
      break;
    case Prim::dynamic_slice: cts[0] = dynamic_update_slice(zeros_of(in), ct, x[1]); break;
    case Prim::dynamic_update_slice:
      if (zero(x[0])) cts[0] = dynamic_update_slice(ct, zeros_of(types[1]), x[2]);
      if (zero(x[1])) cts[1] = dynamic_slice(ct, x[2], types[1].shape);
      break;
    default: break;
  }
}

}  // namespace

void register_layout_derivatives(RuleTable& table) {
  for (int i = 0; i < prim_count; ++i)
    if (info(Prim(i)).family == Family::layout) table.define(Prim(i), {.jvp = &linear_jvp, .transpose = &layout_transpose});
}

}  // namespace nx::ops
