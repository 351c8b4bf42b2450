// Layout primitives: reshape, transpose, broadcast, slice and flip give views
// of their operand's storage where the layout allows; pad, concatenate, take
// and the dynamic slices copy.
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "ops/broadcast.hpp"
#include "ops/concrete.hpp"
#include "ops/indexing.hpp"
#include "ops/kernels/kernels.hpp"
#include "ops/sizes.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {
namespace {

std::string_view api_of(Prim p) { return info(p).api; }

// ---- type rules

TensorType reshape_type(Prim p, std::span<const Tensor> x, const Params& params) {
  if (shape_problem(params.shape) || numel(params.shape) != x[0].numel())
    fail(api_of(p), "cannot reshape " + describe(x[0]) + " (" + std::to_string(x[0].numel()) +
                        " elements) into " + to_string(params.shape));
  return {x[0].dtype(), params.shape, x[0].placement()};
}

TensorType transpose_type(Prim p, std::span<const Tensor> x, const Params& params) {
  Axes sorted = params.axes;
  std::sort(sorted.begin(), sorted.end());
  bool ok = std::int64_t(sorted.size()) == x[0].ndim();
  for (std::size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == std::int64_t(i);
  if (!ok) fail(api_of(p), to_string(params.axes) + " is not a permutation of the axes of " + describe(x[0]));
  Shape out;
  for (auto a : params.axes) out.push_back(x[0].shape()[a]);
  return {x[0].dtype(), out, x[0].placement()};
}

TensorType broadcast_type(Prim p, std::span<const Tensor> x, const Params& params) {
  if (!broadcasts_to(x[0].shape(), params.shape))
    fail(api_of(p), "shape " + to_string(x[0].shape()) + " does not broadcast to " + to_string(params.shape));
  return {x[0].dtype(), params.shape, x[0].placement()};
}

// Written so that no step, however large, overflows.
std::int64_t sliced_length(std::int64_t start, std::int64_t stop, std::int64_t step) {
  return stop <= start ? 0 : 1 + (stop - start - 1) / step;
}

TensorType slice_type(Prim p, std::span<const Tensor> x, const Params& params) {
  const Shape& in = x[0].shape();
  const std::size_t n = in.size();
  if (params.starts.size() != n || params.stops.size() != n || params.steps.size() != n)
    fail(api_of(p), "expected " + std::to_string(n) + " starts, stops and steps for " + describe(x[0]));
  Shape out;
  for (std::size_t d = 0; d < n; ++d) {
    auto a = params.starts[d], b = params.stops[d], s = params.steps[d];
    if (s < 1 || a < 0 || b < a || b > in[d])
      fail(api_of(p), "slice " + std::to_string(a) + ":" + std::to_string(b) + ":" + std::to_string(s) +
                          " does not fit axis " + std::to_string(d) + " of " + describe(x[0]));
    out.push_back(sliced_length(a, b, s));
  }
  return {x[0].dtype(), out, x[0].placement()};
}

// The interior widths of a pad: none when the parameter is empty.
std::int64_t interior_of(const Params& params, std::size_t d) {
  return params.interior.empty() ? 0 : params.interior[d];
}

TensorType pad_type(Prim p, std::span<const Tensor> x, const Params& params) {
  const std::size_t n = x[0].shape().size();
  if (params.lo.size() != n || params.hi.size() != n || (!params.interior.empty() && params.interior.size() != n))
    fail(api_of(p), "expected " + std::to_string(n) + " (before, after) widths for " + describe(x[0]));
  Shape out = x[0].shape();
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t interior = interior_of(params, d);
    if (params.lo[d] < 0 || params.hi[d] < 0 || interior < 0) fail(api_of(p), "pad widths must not be negative");
    auto inside = out[d] > 0 ? multiply_lengths(out[d] - 1, interior) : 0;
    auto with_edges = inside ? add_lengths(*inside, params.lo[d]) : std::nullopt;
    with_edges = with_edges ? add_lengths(*with_edges, params.hi[d]) : std::nullopt;
    auto length = with_edges ? add_lengths(*with_edges, out[d]) : std::nullopt;
    if (!length)
      fail(api_of(p), "padding axis " + std::to_string(d) + " of " + describe(x[0]) + " makes it longer than " +
                          std::string(max_elements_text) + " elements");
    out[d] = *length;
  }
  return {x[0].dtype(), out, x[0].placement()};
}

TensorType concatenate_type(Prim p, std::span<const Tensor> x, const Params& params) {
  if (x.empty()) fail(api_of(p), "no tensors to concatenate");
  check_same_dtype(p, x);
  Shape out = x[0].shape();
  if (params.axis < 0 || params.axis >= std::int64_t(out.size()))
    fail(api_of(p), "axis " + std::to_string(params.axis) + " is out of range for " + describe(x[0]));
  for (const Tensor& t : x.subspan(1)) {
    Shape a = x[0].shape(), b = t.shape();
    if (a.size() != b.size()) fail(api_of(p), "shapes " + to_string(a) + " and " + to_string(b) + " differ in rank");
    a[params.axis] = b[params.axis] = 0;
    if (a != b)
      fail(api_of(p), "shapes " + to_string(x[0].shape()) + " and " + to_string(t.shape()) +
                          " differ off axis " + std::to_string(params.axis));
    auto length = add_lengths(out[params.axis], t.shape()[params.axis]);
    if (!length)
      fail(api_of(p), "the result's axis " + std::to_string(params.axis) + " would be longer than " +
                          std::string(max_elements_text) + " elements");
    out[params.axis] = *length;
  }
  return {x[0].dtype(), out, x[0].placement()};
}

TensorType flip_type(Prim p, std::span<const Tensor> x, const Params& params) {
  for (auto a : params.axes)
    if (a < 0 || a >= x[0].ndim()) fail(api_of(p), "axis " + std::to_string(a) + " is out of range for " + describe(x[0]));
  return type_of(x[0]);
}

void check_index_dtype(Prim p, const Tensor& t, const char* what) {
  if (!is_integer(t.dtype())) fail(api_of(p), std::string(what) + " must be an integer tensor, got " + describe(t));
}

TensorType take_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_index_dtype(p, x[1], "the indices");
  const Shape& in = x[0].shape();
  if (params.axis < 0 || params.axis >= std::int64_t(in.size()))
    fail(api_of(p), "axis " + std::to_string(params.axis) + " is out of range for " + describe(x[0]));
  if (in[params.axis] == 0 && x[1].numel() > 0 && params.mode == IndexMode::clamp)
    fail(api_of(p), "cannot index the empty axis " + std::to_string(params.axis) + " of " + describe(x[0]));
  Shape out(in.begin(), in.begin() + params.axis);
  out.insert(out.end(), x[1].shape().begin(), x[1].shape().end());
  out.insert(out.end(), in.begin() + params.axis + 1, in.end());
  return {x[0].dtype(), out, x[0].placement()};
}

// scatter_add(operand, indices, updates): updates has take's result shape.
TensorType scatter_add_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  const Tensor taken[] = {x[0], x[1]};
  const TensorType rows = take_type(p, taken, params);
  check_same_dtype(p, std::array<Tensor, 2>{x[0], x[2]});
  if (rows.shape != x[2].shape())
    fail(api_of(p), "the updates " + describe(x[2]) + " do not have the shape " + to_string(rows.shape) +
                        " that the indices " + describe(x[1]) + " take from " + describe(x[0]) + " along axis " +
                        std::to_string(params.axis));
  return type_of(x[0]);
}

void check_starts(Prim p, const Tensor& t, const Tensor& starts) {
  check_index_dtype(p, starts, "starts");
  if (starts.shape() != Shape{t.ndim()})
    fail(api_of(p), "starts must have shape [" + std::to_string(t.ndim()) + "] for " + describe(t) + ", got " +
                        describe(starts));
}

TensorType dynamic_slice_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_starts(p, x[0], x[1]);
  if (params.shape.size() != x[0].shape().size())
    fail(api_of(p), "sizes " + to_string(params.shape) + " do not match the rank of " + describe(x[0]));
  for (std::size_t d = 0; d < params.shape.size(); ++d)
    if (params.shape[d] < 0 || params.shape[d] > x[0].shape()[d])
      fail(api_of(p), "sizes " + to_string(params.shape) + " do not fit in " + describe(x[0]));
  return {x[0].dtype(), params.shape, x[0].placement()};
}

TensorType dynamic_update_slice_type(Prim p, std::span<const Tensor> x, const Params&) {
  check_same_dtype(p, x.subspan(0, 2));
  check_starts(p, x[0], x[2]);
  const Shape &a = x[0].shape(), &u = x[1].shape();
  bool fits = a.size() == u.size();
  for (std::size_t d = 0; fits && d < a.size(); ++d) fits = u[d] <= a[d];
  if (!fits) fail(api_of(p), "the update " + describe(x[1]) + " does not fit in " + describe(x[0]));
  return type_of(x[0]);
}

// ---- eager

Tensor reshape_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType& type) {
  Tensor c = contiguous(x[0]);
  return make_view(c, type.shape, contiguous_strides(type.shape), c.impl()->offset);
}

Tensor transpose_eager(Prim, std::span<const Tensor> x, const Params& params, const TensorType& type) {
  const auto& t = *x[0].impl();
  detail::Strides strides;
  for (auto a : params.axes) strides.push_back(t.strides[a]);
  return make_view(x[0], type.shape, strides, t.offset);
}

Tensor broadcast_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType& type) {
  return make_view(x[0], type.shape, broadcast_strides(*x[0].impl(), type.shape), x[0].impl()->offset);
}

Tensor slice_eager(Prim, std::span<const Tensor> x, const Params& params, const TensorType& type) {
  const auto& t = *x[0].impl();
  detail::Strides strides;
  std::int64_t offset = t.offset;
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    offset += params.starts[d] * t.strides[d];
    // With one row or none the stride is never used (and stride * step may overflow).
    strides.push_back(type.shape[d] > 1 ? t.strides[d] * params.steps[d] : t.strides[d]);
  }
  return make_view(x[0], type.shape, strides, offset);
}

Tensor flip_eager(Prim, std::span<const Tensor> x, const Params& params, const TensorType& type) {
  const auto& t = *x[0].impl();
  detail::Strides strides = t.strides;
  std::int64_t offset = t.offset;
  for (auto a : params.axes) {
    if (t.shape[a] == 0) continue;
    offset += (t.shape[a] - 1) * strides[a];
    strides[a] = -strides[a];
  }
  return make_view(x[0], type.shape, strides, offset);
}

// A view of `into` at `starts` with `shape`.
Tensor window(const Tensor& into, const Shape& starts, const Shape& shape) {
  const auto& t = *into.impl();
  std::int64_t offset = t.offset;
  for (std::size_t d = 0; d < starts.size(); ++d) offset += starts[d] * t.strides[d];
  return make_view(into, shape, t.strides, offset);
}

void pad_into(Prim, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  fill(out, params.value);
  Tensor inner = window(out, params.lo, x[0].shape());
  auto& strides = inner.impl()->strides;  // every (interior + 1)-th element
  for (std::size_t d = 0; d < strides.size(); ++d)
    if (inner.shape()[d] > 1) strides[d] *= interior_of(params, d) + 1;
  copy_elements(*x[0].impl(), *inner.impl());
}

void concatenate_into(Prim, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  Shape at(out.shape().size(), 0);
  for (const Tensor& t : x) {
    copy_elements(*t.impl(), *window(out, at, t.shape()).impl());
    at[params.axis] += t.shape()[params.axis];
  }
}

// ---- gathers and scatters: indices read in place, in their own dtype
// (ops/indexing.hpp)

// How take and scatter_add address their slabs: the operand as [before,
// length, after] (C order) indexed along length, the gathered side as
// [before, k, after] with k running over the flattened indices.
struct Slabs {
  std::size_t before = 1, length, after = 1;  // after: elements per slab

  Slabs(const Shape& operand, std::int64_t axis) : length(std::size_t(operand[std::size_t(axis)])) {
    for (std::int64_t d = 0; d < axis; ++d) before *= std::size_t(operand[std::size_t(d)]);
    for (std::size_t d = std::size_t(axis) + 1; d < operand.size(); ++d) after *= std::size_t(operand[d]);
  }
};

void take_into(Prim, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  const Tensor operand = contiguous(x[0]), indices = contiguous(x[1]);
  const Slabs s(operand.shape(), params.axis);
  const std::size_t bytes = s.after * nx::size_of(out.dtype()), count = std::size_t(indices.numel());
  const GatherRows gather = gather_rows(indices.dtype(), params.mode, bytes);
  const char* source = data_of<char>(operand);
  char* target = data_of<char>(out);
  for (std::size_t b = 0; b < s.before; ++b)
    gather(target + b * count * bytes, source + b * s.length * bytes, data_of<char>(indices), 0, count, s.length,
           bytes);
}

// Adds each slab of the updates into the row its index names, in place, in
// the order of the indices (elementwise, so `out` may be the operand).
void scatter_add_into(Prim, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  if (x[0].impl() != out.impl()) copy_elements(*x[0].impl(), *out.impl());
  const Slabs s(out.shape(), params.axis);
  if (s.after == 0) return;
  const Tensor indices = contiguous(x[1]), updates = contiguous(x[2]);
  const DType dtype = out.dtype();
  const ScatterRows scatter = scatter_rows(indices.dtype(), params.mode, dtype, s.after);
  const kernels::BinaryRow add = kernels::table().binary[int(Prim::add)][int(dtype)];
  const std::size_t bytes = s.after * nx::size_of(dtype), count = std::size_t(indices.numel());
  for (std::size_t b = 0; b < s.before; ++b)
    scatter(data_of<char>(out) + b * s.length * bytes, data_of<char>(updates) + b * count * bytes,
            data_of<char>(indices), 0, count, s.length, s.after, bytes, add);
}

// Starts clamped so that a window of `sizes` fits, as JAX's dynamic slices
// (read in place: a negative start is 0, one past the end the last fit).
Shape clamped_starts(const Tensor& starts, const Shape& shape, const Shape& sizes) {
  const Tensor c = contiguous(starts);
  Shape out(shape.size());
  with_index_type(c.dtype(), [&](auto type) {
    using I = decltype(type);
    const I* s = data_of<I>(c);
    for (std::size_t d = 0; d < out.size(); ++d) {
      const std::int64_t last = shape[d] - sizes[d];
      if constexpr (std::is_signed_v<I>)
        out[d] = std::clamp<std::int64_t>(s[d], 0, last);
      else
        out[d] = std::uint64_t(s[d]) < std::uint64_t(last) ? std::int64_t(s[d]) : last;
    }
  });
  return out;
}

Tensor dynamic_slice_eager(Prim, std::span<const Tensor> x, const Params& params, const TensorType&) {
  return window(x[0], clamped_starts(x[1], x[0].shape(), params.shape), params.shape);
}

// (`out` may be the operand itself, written in place: vm/memory_plan.cpp)
void dynamic_update_slice_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& out) {
  if (x[0].impl() != out.impl()) copy_elements(*x[0].impl(), *out.impl());
  copy_elements(*x[1].impl(), *window(out, clamped_starts(x[2], x[0].shape(), x[1].shape()), x[1].shape()).impl());
}

}  // namespace

void register_layout(RuleTable& table) {
  auto set = [&](Prim p, Rules r) { table.define(p, r); };
  set(Prim::reshape, {&reshape_type, &reshape_eager});
  set(Prim::transpose, {&transpose_type, &transpose_eager});
  set(Prim::broadcast, {&broadcast_type, &broadcast_eager});
  set(Prim::slice, {&slice_type, &slice_eager});
  set(Prim::pad, {.type = &pad_type, .eager = &eager_into<&pad_into>, .into = &pad_into});
  set(Prim::concatenate, {.type = &concatenate_type, .eager = &eager_into<&concatenate_into>, .into = &concatenate_into});
  set(Prim::flip, {&flip_type, &flip_eager});
  set(Prim::take, {.type = &take_type, .eager = &eager_into<&take_into>, .into = &take_into});
  set(Prim::scatter_add, {.type = &scatter_add_type, .eager = &eager_into<&scatter_add_into>, .into = &scatter_add_into});
  set(Prim::dynamic_slice, {&dynamic_slice_type, &dynamic_slice_eager});
  set(Prim::dynamic_update_slice, {.type = &dynamic_update_slice_type, .eager = &eager_into<&dynamic_update_slice_into>,
                                   .into = &dynamic_update_slice_into});
}

}  // namespace nx::ops
