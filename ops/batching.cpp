// Batching rules (rune::vmap) of every family. A batched operand holds
// every lane's value along axis 0, an unbatched one is the same in every
// lane; each rule gives the lanes' results along axis 0. The lanes share one
// primitive wherever its parameters can name the lane axis: an unbatched
// operand is broadcast by NumPy's rules (or as a view) rather than copied,
// and `matmul` of a batched by an unbatched operand is one matmul; `take` and
// `scatter_add` with per-lane indices address the lanes laid end to end, and
// dynamic slices with per-lane starts gather their windows axis by axis.
#include <algorithm>

#include "ops/derivatives.hpp"

namespace nx::ops {
namespace {

std::int64_t lane_rank(const Tensor& t, bool batched) { return t.ndim() - (batched ? 1 : 0); }

// A batched operand with lengths of 1 inserted after its lane axis up to
// `rank` axes per lane, so that right-aligned broadcasting lines each lane's
// value up with the unbatched operands.
Tensor aligned(const Tensor& t, bool batched, std::int64_t rank) {
  if (!batched || lane_rank(t, true) >= rank) return t;
  Shape s = t.shape();
  s.insert(s.begin() + 1, std::size_t(rank - lane_rank(t, true)), 1);
  return reshape(t, s);
}

// Every lane's value along axis 0: an unbatched operand broadcast (a view).
Tensor every_lane(const Tensor& t, bool batched, std::int64_t lanes) {
  if (batched) return t;
  Shape s = t.shape();
  s.insert(s.begin(), lanes);
  return broadcast_to(t, s);
}

std::vector<Tensor> all_lanes(std::span<const Tensor> x, std::span<const bool> batched, std::int64_t lanes) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < x.size(); ++i) out.push_back(every_lane(x[i], batched[i], lanes));
  return out;
}

// Axes of a lane counted in the batched value.
Axes shifted(const Axes& axes) {
  Axes out;
  for (auto a : axes) out.push_back(a + 1);
  return out;
}

// The primitive on each lane's operands, the results stacked.
Tensor lane_by_lane(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                    std::int64_t lanes) {
  // Operand k in lane i; with no lane, zeros of a lane's type stand in (only
  // the result's type is needed then).
  auto operand = [&](std::size_t k, std::int64_t i) {
    if (!batched[k]) return x[k];
    if (lanes > 0) return get(x[k], i);
    return zeros(x[k].dtype(), Shape(x[k].shape().begin() + 1, x[k].shape().end()));
  };
  std::vector<Tensor> rows;
  for (std::int64_t i = 0; i < std::max<std::int64_t>(lanes, 1); ++i) {
    std::vector<Tensor> lane;
    for (std::size_t k = 0; k < x.size(); ++k) lane.push_back(operand(k, i));
    rows.push_back(bind(p, lane, params));
  }
  if (lanes > 0) return stack(rows);
  Shape none = rows[0].shape();
  none.insert(none.begin(), 0);
  return zeros(rows[0].dtype(), none);
}

Tensor elementwise_batch(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                         std::int64_t) {
  std::int64_t rank = 0;
  for (std::size_t i = 0; i < x.size(); ++i) rank = std::max(rank, lane_rank(x[i], batched[i]));
  std::vector<Tensor> operands;
  for (std::size_t i = 0; i < x.size(); ++i) operands.push_back(aligned(x[i], batched[i], rank));
  return bind(p, operands, params);
}

Tensor reduce_batch(Prim p, std::span<const Tensor> x, std::span<const bool>, const Params& params, std::int64_t) {
  Params q = params;
  if (info(p).family == Family::arg) q.axis = params.axis + 1;
  else q.axes = shifted(params.axes);
  return bind(p, {x[0]}, q);
}

// Matrix products, solves and random bits take leading batch axes but
// broadcast none of their own: the unbatched operand is broadcast over the
// lanes (a view). A batched key gives each lane its own stream.
Tensor matrices_batch(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                      std::int64_t lanes) {
  return bind(p, all_lanes(x, batched, lanes), params);
}

Tensor layout_batch(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                    std::int64_t lanes) {
  Params q = params;
  auto prepend = [](Shape& s, std::int64_t v) { s.insert(s.begin(), v); };
  switch (p) {
    case Prim::reshape: prepend(q.shape, lanes); break;
    case Prim::transpose: q.axes = shifted(params.axes), prepend(q.axes, 0); break;
    case Prim::broadcast:
      prepend(q.shape, lanes);
      return bind(p, {aligned(x[0], true, std::int64_t(params.shape.size()))}, q);
    case Prim::slice: prepend(q.starts, 0), prepend(q.stops, lanes), prepend(q.steps, 1); break;
    case Prim::pad:
      prepend(q.lo, 0), prepend(q.hi, 0);
      if (!q.interior.empty()) prepend(q.interior, 0);
      break;
    case Prim::flip: q.axes = shifted(params.axes); break;
    case Prim::concatenate: q.axis = params.axis + 1; return bind(p, all_lanes(x, batched, lanes), q);
    default: break;
  }
  return bind(p, {x[0]}, q);
}

// Gathers and scatters with per-lane indices into a per-lane operand x
// ([lanes, before..., n, after...]) address the lanes' indexed axes laid end
// to end: x as [lanes * n, before..., after...], and each lane's indices
// (made non-negative and clamped, as take does; in drop mode, those outside
// the axis made -1, outside every lane's) offset to its own stretch.
// Indices (or starts) as int64: uint64 ones beyond 2^62 are capped there
// first (past every axis, they clamp to its end as take's do; a cast would
// wrap those beyond int64's range to negative ones, counting from the end).
Tensor signed_indices(const Tensor& indices) {
  return cast(indices.dtype() == uint64 ? minimum(indices, 0x1p62) : indices, int64);
}

struct EndToEnd {
  Tensor operand, indices;
  std::int64_t before, k, after;  // axes of a lane before and after the indexed one; index axes
};

EndToEnd end_to_end(const Tensor& x, const Tensor& indices, std::int64_t axis, std::int64_t lanes, IndexMode mode) {
  const std::int64_t n = x.shape()[std::size_t(axis + 1)];
  Tensor moved = moveaxis(x, axis + 1, 1);  // [lanes, n, before..., after...]
  Shape flat(moved.shape().begin() + 1, moved.shape().end());
  flat[0] = lanes * n;
  Tensor i = signed_indices(indices);
  if (mode == IndexMode::clamp) i = clamp(where(less(i, 0.), i + double(n), i), 0., double(n - 1));
  Shape lane_axis(std::size_t(i.ndim()), 1);
  lane_axis[0] = lanes;
  const Tensor stretch = reshape(arange(int64, 0, double(lanes)) * double(n), lane_axis);
  i = mode == IndexMode::clamp ? i + stretch
                               : where(logical_and(greater_equal(i, 0.), less(i, double(n))), i + stretch, -1.);
  return {reshape(moved, flat), i, axis, indices.ndim() - 1, x.ndim() - 2 - axis};
}

Params indexed_along_0(IndexMode mode) {
  Params q;
  q.mode = mode;
  return q;
}

// The permutation taking [lanes, first (a axes), second (b axes), rest (c)]
// to [lanes, second, first, rest].
Axes swapped(std::int64_t a, std::int64_t b, std::int64_t c) {
  Axes perm{0};
  for (std::int64_t d = 0; d < b; ++d) perm.push_back(1 + a + d);
  for (std::int64_t d = 0; d < a; ++d) perm.push_back(1 + d);
  for (std::int64_t d = 0; d < c; ++d) perm.push_back(1 + a + b + d);
  return perm;
}

Tensor take_both_batched(const Tensor& x, const Tensor& indices, std::int64_t axis, std::int64_t lanes,
                         IndexMode mode = IndexMode::clamp) {
  EndToEnd e = end_to_end(x, indices, axis, lanes, mode);
  Tensor gathered = bind(Prim::take, {e.operand, e.indices}, indexed_along_0(mode));  // [lanes, k..., before..., after...]
  return transpose(gathered, swapped(e.k, e.before, e.after));
}

// scatter_add(x, indices, updates) with per-lane indices: updates (take's
// result per lane, [lanes, before..., k..., after...]) into the lanes laid
// end to end, then back to each lane's layout.
Tensor scatter_both_batched(const Tensor& x, const Tensor& indices, const Tensor& updates, std::int64_t axis,
                            std::int64_t lanes, IndexMode mode) {
  EndToEnd e = end_to_end(x, indices, axis, lanes, mode);
  Tensor rows = transpose(updates, swapped(e.before, e.k, e.after));  // [lanes, k..., before..., after...]
  Tensor summed = bind(Prim::scatter_add, {e.operand, e.indices, rows}, indexed_along_0(mode));
  Shape split = x.shape();
  split.erase(split.begin() + axis + 1);
  split.insert(split.begin() + 1, x.shape()[std::size_t(axis + 1)]);  // [lanes, n, before..., after...]
  return moveaxis(reshape(summed, split), 1, axis + 1);
}

// dynamic_slice with per-lane starts: along each axis in turn, a gather of
// the window's rows from each lane's start (clamped so the window fits, as
// dynamic_slice does).
Tensor slice_both_batched(const Tensor& x, const Tensor& starts, const Shape& sizes, std::int64_t lanes) {
  Tensor out = x;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const std::int64_t n = x.shape()[d + 1], at = std::int64_t(d);
    Tensor start = signed_indices(slice(starts, {0, at}, {lanes, at + 1}));  // [lanes, 1]
    Tensor rows = clamp(start, 0., double(n - sizes[d])) + arange(int64, 0, double(sizes[d]));
    out = take_both_batched(out, rows, at, lanes);
  }
  return out;
}

// dynamic_update_slice with per-lane starts: each position of x takes the
// update's element at (position - start) (gathered axis by axis, clamped)
// where it falls in the window, and keeps its own elsewhere. Gathers and a
// select copy elements, so the result has the lanes' bits exactly.
Tensor update_both_batched(const Tensor& x, const Tensor& update, const Tensor& starts, std::int64_t lanes) {
  Tensor placed = update, inside;
  const std::size_t rank = std::size_t(x.ndim() - 1);
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t n = x.shape()[d + 1], w = update.shape()[d + 1], at = std::int64_t(d);
    Tensor start = clamp(signed_indices(slice(starts, {0, at}, {lanes, at + 1})), 0., double(n - w));  // [lanes, 1]
    Tensor offset = arange(int64, 0, double(n)) - start;                                           // [lanes, n]
    placed = take_both_batched(placed, clamp(offset, 0., double(w - 1)), at, lanes);
    Shape along(rank + 1, 1);
    along[0] = lanes, along[d + 1] = n;
    Tensor in_window = reshape(logical_and(greater_equal(offset, 0.), less(offset, double(w))), along);
    inside = d == 0 ? in_window : logical_and(inside, in_window);
  }
  return rank == 0 ? placed : where(inside, placed, x);
}

// take(x, indices, axis): per-lane indices into a shared operand give the
// lanes where the indices' axes land; indices shared by the lanes index
// axis + 1 of the batched operand.
Tensor take_batch(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                  std::int64_t lanes) {
  if (batched[0] && batched[1]) {
    if (x[0].shape()[std::size_t(params.axis + 1)] == 0) return lane_by_lane(p, x, batched, params, lanes);
    return take_both_batched(x[0], x[1], params.axis, lanes, params.mode);
  }
  Params q = params;
  if (batched[0]) {
    q.axis = params.axis + 1;
    return bind(p, {x[0], x[1]}, q);
  }
  return moveaxis(bind(p, {x[0], x[1]}, q), params.axis, 0);
}

// The index operand of the gathers and dynamic slices; with per-lane
// indices they run lane by lane, else the lane axis is prepended.
std::size_t index_operand(Prim p) {
  switch (p) {
    case Prim::dynamic_update_slice: return 2;  // (operand, update, starts)
    default: return 1;                          // (operand, starts), (operand, indices, updates)
  }
}

Tensor indexed_batch(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                     std::int64_t lanes) {
  const std::size_t k = index_operand(p);
  if (p == Prim::scatter_add && batched[k]) {
    std::vector<Tensor> all = all_lanes(x, batched, lanes);
    if (all[0].shape()[std::size_t(params.axis + 1)] > 0)
      return scatter_both_batched(all[0], all[1], all[2], params.axis, lanes, params.mode);
  }
  if (p == Prim::dynamic_slice && batched[k])
    return slice_both_batched(every_lane(x[0], batched[0], lanes), x[k], params.shape, lanes);
  if (p == Prim::dynamic_update_slice && batched[k] && x[1].numel() > 0)
    return update_both_batched(every_lane(x[0], batched[0], lanes), every_lane(x[1], batched[1], lanes), x[k], lanes);
  if (batched[k]) return lane_by_lane(p, x, batched, params, lanes);
  std::vector<Tensor> operands = all_lanes(x, batched, lanes);
  operands[k] = x[k];
  Params q = params;
  if (p == Prim::scatter_add) {
    q.axis = params.axis + 1;
  } else {  // a start of 0 along the lanes
    operands[k] = concatenate({zeros(x[k].dtype(), {1}), x[k]}, 0);
    if (p == Prim::dynamic_slice) q.shape.insert(q.shape.begin(), lanes);
  }
  return bind(p, operands, q);
}

// The ranks' collectives exchange every lane's value in one call: the lanes
// stay on axis 0, ahead of a gather's ranks.
Tensor ranks_batch(Prim p, std::span<const Tensor> x, std::span<const bool> batched, const Params& params,
                   std::int64_t lanes) {
  const Tensor v = every_lane(x[0], batched[0], lanes);
  if (p == Prim::ranks_gather) return moveaxis(bind(p, {v}, params), 0, 1);
  if (p == Prim::ranks_scatter_sum) return bind(p, {moveaxis(v, 1, 0)}, params);
  return bind(p, {v}, params);
}

}  // namespace

void register_batching(RuleTable& table) {
  const Prim indexed[] = {Prim::take, Prim::scatter_add, Prim::dynamic_slice, Prim::dynamic_update_slice};
  for (int i = 0; i < prim_count; ++i) {
    const Prim p = Prim(i);
    if (std::find(std::begin(indexed), std::end(indexed), p) != std::end(indexed)) continue;  // (below)
    decltype(Rules::batch) batch = nullptr;
    switch (info(p).family) {
      case Family::unary:
      case Family::binary:
      case Family::select:
      case Family::convert: batch = &elementwise_batch; break;
      case Family::reduce:
      case Family::arg: batch = &reduce_batch; break;
      case Family::linalg:
      case Family::random: batch = &matrices_batch; break;
      case Family::layout: batch = &layout_batch; break;
      case Family::collective: break;  // (computed by the map they name: batch/batch_trace.cpp)
      case Family::ranks: batch = &ranks_batch; break;
    }
    table.define(p, {.batch = batch});
  }
  table.define(Prim::take, {.batch = &take_batch});
  for (Prim p : {Prim::scatter_add, Prim::dynamic_slice, Prim::dynamic_update_slice}) table.define(p, {.batch = &indexed_batch});
}

}  // namespace nx::ops
