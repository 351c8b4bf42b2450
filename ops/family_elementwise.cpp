// Elementwise primitives (unary, binary, select, convert): their rules.
//
// Operands broadcast as NumPy's; the result is a C-order tensor of the
// broadcast shape (a fresh one, or the buffer the VM's memory plan gives
// the `into` rules), computed row by row by the kernel table's loops.
#include "ops/broadcast.hpp"
#include "ops/concrete.hpp"
#include "ops/kernels/iterate.hpp"
#include "ops/kernels/kernels.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {
namespace {

Shape broadcast_all(Prim p, std::span<const Tensor> operands) {
  Shape shape = operands[0].shape();
  for (const Tensor& t : operands.subspan(1)) {
    if (t.shape().empty() || t.shape() == shape) continue;  // (x + 1., x + y: nothing to join)
    auto joined = broadcast_shapes(shape, t.shape());
    if (!joined) {
      std::string shapes;
      for (std::size_t i = 0; i < operands.size(); ++i)
        shapes += (i ? (i + 1 == operands.size() ? " and " : ", ") : "") + to_string(operands[i].shape());
      fail(info(p).api, "shapes " + shapes + " do not broadcast");
    }
    shape = *joined;
  }
  return shape;
}

TensorType unary_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  return {result_dtype(p, x[0].dtype(), params), x[0].shape(), x[0].placement()};
}

TensorType binary_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_same_dtype(p, x);
  // (the operands share a dtype: a refusal describes the one of more axes,
  // not the 0-d tensor a double operand became, as in nx::sub(1., b))
  check_accepts(p, x[1].ndim() > x[0].ndim() ? x[1] : x[0]);
  return {result_dtype(p, x[0].dtype(), params), broadcast_all(p, x), x[0].placement()};
}

TensorType select_type(Prim p, std::span<const Tensor> x, const Params&) {
  if (x[0].dtype() != bool_)
    fail(info(p).api, "the condition must be a bool tensor, got " + describe(x[0]));
  check_same_dtype(p, x.subspan(1));
  return {x[1].dtype(), broadcast_all(p, x), x[1].placement()};
}

TensorType convert_type(Prim, std::span<const Tensor> x, const Params& params) {
  return {params.dtype, x[0].shape(), x[0].placement()};
}

// Runs `loop` over the operands broadcast to the result's shape.
// The fast path of small operations (x + 1. on a few elements): every
// operand is either C-order with the result's shape (stride 1) or a single
// element (stride 0), so one row covers everything.
template <int N, class Loop> bool run_flat(std::span<const Tensor> x, const Tensor& out, Loop& loop) {
  const Shape& shape = out.shape();
  const std::int64_t n = numel(shape);
  if (n >= parallel_grain) return false;
  std::array<const char*, N> at;
  std::array<std::int64_t, N + 1> step;
  for (int k = 0; k < N; ++k) {
    const auto& t = *x[k].impl();
    if (numel(t.shape) == 1) step[k] = 0;
    else if (t.shape == shape && is_contiguous(t)) step[k] = 1;
    else return false;
    at[k] = base_address(t);
  }
  step[N] = 1;
  loop(n, at, step, base_address(*out.impl()));
  return true;
}

template <int N, class Loop> void run_rows(std::span<const Tensor> x, const Tensor& out, Loop loop) {
  if (run_flat<N>(x, out, loop)) return;
  const Shape& shape = out.shape();
  std::array<detail::Strides, N> strides;
  std::array<const detail::Strides*, N + 1> views;
  std::array<const char*, N> bases;
  for (int k = 0; k < N; ++k) {
    strides[k] = broadcast_strides(*x[k].impl(), shape);
    views[k] = &strides[k];
    bases[k] = base_address(*x[k].impl());
  }
  views[N] = &out.impl()->strides;
  char* dst = base_address(*out.impl());
  std::array<std::size_t, N> sizes;
  for (int k = 0; k < N; ++k) sizes[k] = size_of(x[k].dtype());
  std::size_t out_size = size_of(out.dtype());
  walk<N + 1>(shape, views,
              [=](const std::array<std::int64_t, N + 1>& off, std::int64_t n,
                  const std::array<std::int64_t, N + 1>& step) {
                std::array<const char*, N> at;
                for (int k = 0; k < N; ++k) at[k] = bases[k] + off[k] * std::int64_t(sizes[k]);
                loop(n, at, step, dst + off[N] * std::int64_t(out_size));
              });
}

// The streaming loop for a large result, when the table has one.
template <class Row> Row pick(Row plain, Row streaming, const Tensor& out) {
  const bool large = std::size_t(out.numel()) * size_of(out.dtype()) >= kernels::streaming_bytes;
  return large && streaming ? streaming : plain;
}

void unary_into(Prim p, std::span<const Tensor> x, const Params&, const Tensor& out) {
  const auto& K = kernels::table();
  auto kernel = pick(K.unary[int(p)][int(x[0].dtype())], K.unary_streaming[int(p)][int(x[0].dtype())], out);
  run_rows<1>(x, out, [kernel](std::int64_t n, auto at, auto step, char* to) { kernel(n, at[0], step[0], to); });
}

void binary_into(Prim p, std::span<const Tensor> x, const Params&, const Tensor& out) {
  const auto& K = kernels::table();
  auto kernel = pick(K.binary[int(p)][int(x[0].dtype())], K.binary_streaming[int(p)][int(x[0].dtype())], out);
  run_rows<2>(x, out, [kernel](std::int64_t n, auto at, auto step, char* to) {
    kernel(n, at[0], step[0], at[1], step[1], to);
  });
}

void select_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& out) {
  auto kernel = kernels::table().select[int(out.dtype())];
  run_rows<3>(x, out, [kernel](std::int64_t n, auto at, auto step, char* to) {
    kernel(n, at[0], step[0], at[1], step[1], at[2], step[2], to);
  });
}

void convert_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& out) {
  auto kernel = kernels::table().convert[int(x[0].dtype())][int(out.dtype())];
  run_rows<1>(x, out, [kernel](std::int64_t n, auto at, auto step, char* to) { kernel(n, at[0], step[0], to); });
}

// A conversion to the operand's own dtype is the operand.
Tensor convert_eager(Prim p, std::span<const Tensor> x, const Params& params, const TensorType& type) {
  if (x[0].dtype() == type.dtype) return x[0];
  return eager_into<&convert_into>(p, x, params, type);
}

// detach's value is its operand.
Tensor identity_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType&) { return x[0]; }

}  // namespace

Tensor convert_elements(const Tensor& t, DType to) {
  Params p;
  p.dtype = to;
  return convert_eager(Prim::convert, std::span<const Tensor>(&t, 1), p, {to, t.shape(), t.placement()});
}

void register_elementwise(RuleTable& table) {
  for (int i = 0; i < prim_count; ++i) {
    const Prim p = Prim(i);
    if (p == Prim::stop_gradient) continue;  // (below)
    switch (info(p).family) {
      case Family::unary: table.define(p, {.type = &unary_type, .eager = &eager_into<&unary_into>, .into = &unary_into}); break;
      case Family::binary: table.define(p, {.type = &binary_type, .eager = &eager_into<&binary_into>, .into = &binary_into}); break;
      case Family::select: table.define(p, {.type = &select_type, .eager = &eager_into<&select_into>, .into = &select_into}); break;
      case Family::convert: table.define(p, {.type = &convert_type, .eager = &convert_eager, .into = &convert_into}); break;
      default: break;
    }
  }
  table.define(Prim::stop_gradient, {.type = &unary_type, .eager = &identity_eager});  // (a view: no into)
}

}  // namespace nx::ops
