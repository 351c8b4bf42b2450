// Reductions over axes, and argmax/argmin along one axis: their rules.
//
// The reduced axes are moved last (a copy when the layout needs one), so each
// output element reduces one contiguous row. Rows longer than a segment are
// cut into fixed segments whose partial results are reduced in order: the
// result is the same whatever the thread count.
#include <algorithm>
#include <vector>

#include "ops/concrete.hpp"
#include "ops/kernels/iterate.hpp"
#include "ops/kernels/kernels.hpp"
#include "ops/reduce_row.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {
namespace {

bool has_identity(Prim p) { return p != Prim::reduce_max && p != Prim::reduce_min; }

TensorType reduce_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  Shape out;
  const Shape& in = x[0].shape();
  for (std::int64_t d = 0; d < std::int64_t(in.size()); ++d) {
    bool reduced = std::find(params.axes.begin(), params.axes.end(), d) != params.axes.end();
    if (!reduced) out.push_back(in[d]);
    else if (in[d] == 0 && !has_identity(p))
      fail(info(p).api, "axis " + std::to_string(d) + " of " + describe(x[0]) +
                            " is empty, and the reduction has no identity");
  }
  return {result_dtype(p, x[0].dtype(), params), out, x[0].placement()};
}

// x viewed with `last` axes moved to the end, in C order in memory.
Tensor rows_last(const Tensor& x, const Axes& last) {
  const auto& t = *x.impl();
  Shape shape;
  detail::Strides strides;
  for (std::int64_t d = 0; d < x.ndim(); ++d)
    if (std::find(last.begin(), last.end(), d) == last.end()) shape.push_back(t.shape[d]), strides.push_back(t.strides[d]);
  for (auto d : last) shape.push_back(t.shape[d]), strides.push_back(t.strides[d]);
  return contiguous(make_view(x, shape, strides, t.offset));
}

// (over no axes: each element, converted to the result's dtype as all and any's bool)
void reduce_into(Prim p, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  if (params.axes.empty()) return copy_elements(*convert_elements(x[0], out.dtype()).impl(), *out.impl());
  Tensor in = rows_last(x[0], params.axes);
  const DType out_dtype = out.dtype();
  const std::int64_t rows = out.numel(), n = rows == 0 ? 0 : in.numel() / rows;
  const DType dt = x[0].dtype();
  const std::size_t in_size = size_of(dt), out_size = size_of(out_dtype);
  const char* src = base_address(*in.impl());
  char* dst = base_address(*out.impl());
  // Several short rows: the loop the VM's kernels fold them with (the same
  // order as the row loop's, and the same code, so NaN payloads agree too).
  const kernels::Table& K = kernels::table();
  const bool several_short = rows > 1 && n > 1 && n <= K.short_row_elements[int(dt)] && out_dtype == dt;
  const kernels::ShortRows short_rows = several_short ? K.short_rows[int(p)][int(dt)] : nullptr;
  auto run = [&](std::int64_t begin, std::int64_t end) {
    if (short_rows)
      return short_rows(end - begin, n, src + begin * n * std::int64_t(in_size), dst + begin * std::int64_t(out_size));
    for (std::int64_t r = begin; r < end; ++r)
      reduce_row(p, dt, out_dtype, n, src + r * n * std::int64_t(in_size), dst + r * std::int64_t(out_size));
  };
  if (rows > 1 && rows * n >= parallel_grain) {
    std::int64_t per = std::max<std::int64_t>(1, chunk_elements / std::max<std::int64_t>(n, 1));
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, per),
                      [&](const auto& r) { run(r.begin(), r.end()); }, tbb::simple_partitioner());
  } else {
    run(0, rows);
  }
}

Tensor reduce_eager(Prim p, std::span<const Tensor> x, const Params& params, const TensorType& type) {
  if (params.axes.empty()) return convert_elements(x[0], type.dtype);  // (no copy of an operand of its dtype)
  return eager_into<&reduce_into>(p, x, params, type);
}

TensorType arg_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  Shape out = x[0].shape();
  if (out[params.axis] == 0)
    fail(info(p).api, "axis " + std::to_string(params.axis) + " of " + describe(x[0]) + " is empty");
  out.erase(out.begin() + params.axis);
  return {int32, out, x[0].placement()};
}

void arg_into(Prim p, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  Tensor in = rows_last(x[0], Axes{params.axis});
  const std::int64_t rows = out.numel(), n = x[0].shape()[params.axis];
  auto kernel = kernels::table().arg[int(p)][int(x[0].dtype())];
  const char* src = base_address(*in.impl());
  auto* dst = data_of<std::int32_t>(out);
  const std::int64_t bytes = std::int64_t(size_of(x[0].dtype()));
  for (std::int64_t r = 0; r < rows; ++r) dst[r] = kernel(n, src + r * n * bytes, 1);
}

}  // namespace

DType accumulator_dtype(Prim p, DType in) {
  if (p == Prim::reduce_and || p == Prim::reduce_or) return bool_;
  return in == float16 || in == bfloat16 ? float32 : in;
}

void reduce_row(Prim p, DType in, DType out, std::int64_t n, const char* row, char* dst) {
  const auto& K = kernels::table();
  if (n <= reduce_segment) return K.reduce[int(p)][int(in)](n, row, dst);
  const std::int64_t segs = (n + reduce_segment - 1) / reduce_segment;
  const std::size_t in_size = size_of(in), partial_size = size_of(accumulator_dtype(p, in));
  std::vector<char> partials(std::size_t(segs) * partial_size);
  const kernels::ReducePieces& pieces = K.reduce_pieces[int(p)][int(in)];
  auto one = [&](std::int64_t s) {
    const std::int64_t len = std::min(reduce_segment, n - s * reduce_segment);
    alignas(64) unsigned char state[kernels::reduce_state_bytes];
    pieces.start(state);
    pieces.add(len, row + s * reduce_segment * std::int64_t(in_size), state);
    pieces.partial(state, partials.data() + std::size_t(s) * partial_size);
  };
  if (n >= parallel_grain)
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, segs, 1),
                      [&](const auto& r) { for (auto s = r.begin(); s < r.end(); ++s) one(s); },
                      tbb::simple_partitioner());
  else
    for (std::int64_t s = 0; s < segs; ++s) one(s);
  combine_segments(p, in, out, segs, partials.data(), dst);
}

void combine_segments(Prim p, DType in, DType out, std::int64_t segments, const char* partials, char* dst) {
  const DType acc = accumulator_dtype(p, in);
  if (acc == out) return reduce_row(p, acc, acc, segments, partials, dst);
  alignas(16) char whole[16];  // (the float32 result, rounded once to the 16-bit dtype)
  reduce_row(p, acc, acc, segments, partials, whole);
  kernels::table().convert[int(acc)][int(out)](1, whole, 0, dst);
}

void register_reductions(RuleTable& table) {
  for (int i = 0; i < prim_count; ++i) {
    if (info(Prim(i)).family == Family::reduce)
      table.define(Prim(i), {.type = &reduce_type, .eager = &reduce_eager, .into = &reduce_into});
    if (info(Prim(i)).family == Family::arg)
      table.define(Prim(i), {.type = &arg_type, .eager = &eager_into<&arg_into>, .into = &arg_into});
  }
}

}  // namespace nx::ops
