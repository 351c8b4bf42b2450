// Elementwise primitives (unary, binary, select, convert): their rules.
//
// Operands broadcast as NumPy's; the result is a fresh C-order tensor of the
// broadcast shape, computed row by row by the kernel table's loops.
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
  check_accepts(p, x[0]);
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
template <int N, class Loop>
bool run_flat(std::span<const Tensor> x, const TensorType& type, const Tensor& out, Loop& loop) {
  const std::int64_t n = numel(type.shape);
  if (n >= parallel_grain) return false;
  std::array<const char*, N> at;
  std::array<std::int64_t, N + 1> step;
  for (int k = 0; k < N; ++k) {
    const auto& t = *x[k].impl();
    if (numel(t.shape) == 1) step[k] = 0;
    else if (t.shape == type.shape && is_contiguous(t)) step[k] = 1;
    else return false;
    at[k] = base_address(t);
  }
  step[N] = 1;
  loop(n, at, step, base_address(*out.impl()));
  return true;
}

template <int N, class Loop>
Tensor run_rows(std::span<const Tensor> x, const TensorType& type, Loop loop) {
  Tensor out = make_tensor(type.dtype, type.shape);
  if (run_flat<N>(x, type, out, loop)) return out;
  std::array<detail::Strides, N> strides;
  std::array<const detail::Strides*, N + 1> views;
  std::array<const char*, N> bases;
  for (int k = 0; k < N; ++k) {
    strides[k] = broadcast_strides(*x[k].impl(), type.shape);
    views[k] = &strides[k];
    bases[k] = base_address(*x[k].impl());
  }
  views[N] = &out.impl()->strides;
  char* dst = base_address(*out.impl());
  std::array<std::size_t, N> sizes;
  for (int k = 0; k < N; ++k) sizes[k] = size_of(x[k].dtype());
  std::size_t out_size = size_of(type.dtype);
  walk<N + 1>(type.shape, views,
              [=](const std::array<std::int64_t, N + 1>& off, std::int64_t n,
                  const std::array<std::int64_t, N + 1>& step) {
                std::array<const char*, N> at;
                for (int k = 0; k < N; ++k) at[k] = bases[k] + off[k] * std::int64_t(sizes[k]);
                loop(n, at, step, dst + off[N] * std::int64_t(out_size));
              });
  return out;
}

// The streaming loop for a large result, when the table has one.
template <class Row> Row pick(Row plain, Row streaming, const TensorType& type) {
  const bool large = std::size_t(numel(type.shape)) * size_of(type.dtype) >= kernels::streaming_bytes;
  return large && streaming ? streaming : plain;
}

Tensor unary_eager(Prim p, std::span<const Tensor> x, const Params&, const TensorType& type) {
  const auto& K = kernels::table();
  auto kernel = pick(K.unary[int(p)][int(x[0].dtype())], K.unary_streaming[int(p)][int(x[0].dtype())], type);
  return run_rows<1>(x, type, [kernel](std::int64_t n, auto at, auto step, char* out) {
    kernel(n, at[0], step[0], out);
  });
}

Tensor binary_eager(Prim p, std::span<const Tensor> x, const Params&, const TensorType& type) {
  const auto& K = kernels::table();
  auto kernel = pick(K.binary[int(p)][int(x[0].dtype())], K.binary_streaming[int(p)][int(x[0].dtype())], type);
  return run_rows<2>(x, type, [kernel](std::int64_t n, auto at, auto step, char* out) {
    kernel(n, at[0], step[0], at[1], step[1], out);
  });
}

Tensor select_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType& type) {
  auto kernel = kernels::table().select[int(type.dtype)];
  return run_rows<3>(x, type, [kernel](std::int64_t n, auto at, auto step, char* out) {
    kernel(n, at[0], step[0], at[1], step[1], at[2], step[2], out);
  });
}

Tensor convert_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType& type) {
  if (x[0].dtype() == type.dtype) return x[0];
  auto kernel = kernels::table().convert[int(x[0].dtype())][int(type.dtype)];
  return run_rows<1>(x, type, [kernel](std::int64_t n, auto at, auto step, char* out) {
    kernel(n, at[0], step[0], out);
  });
}

// detach's value is its operand.
Tensor identity_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType&) { return x[0]; }

}  // namespace

Tensor convert_elements(const Tensor& t, DType to) {
  Params p;
  p.dtype = to;
  return convert_eager(Prim::convert, std::span<const Tensor>(&t, 1), p, {to, t.shape(), t.placement()});
}

void register_elementwise(Rules* table) {
  for (int i = 0; i < prim_count; ++i) {
    switch (info(Prim(i)).family) {
      case Family::unary: table[i] = {&unary_type, &unary_eager}; break;
      case Family::binary: table[i] = {&binary_type, &binary_eager}; break;
      case Family::select: table[i] = {&select_type, &select_eager}; break;
      case Family::convert: table[i] = {&convert_type, &convert_eager}; break;
      default: break;
    }
  }
  table[int(Prim::stop_gradient)].eager = &identity_eager;
}

}  // namespace nx::ops
