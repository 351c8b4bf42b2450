// nx::matmul and nx::dot with NumPy's rules, over the matmul primitive.
#include "ops/broadcast.hpp"
#include "ops/concrete.hpp"
#include "ops/type_checks.hpp"
#include "rune/nx.hpp"

namespace nx {

// A 1-d operand is a row (a) or a column (b) vector whose axis is dropped
// from the result; batch axes broadcast.
Tensor matmul(Operand a, const Tensor& b) {
  const detail::Calling here(a.site());
  const ops::EntryPoint entry("nx::matmul");
  std::array<Tensor, 2> operands{a, b};
  ops::check_defined("nx::matmul", operands);
  if (a.ndim() == 0 || b.ndim() == 0)
    ops::fail("nx::matmul", "scalar operands have no matrix product (use nx::mul)");
  Tensor a2 = a.ndim() == 1 ? reshape(a, {1, a.shape()[0]}) : a.tensor();
  Tensor b2 = b.ndim() == 1 ? reshape(b, {b.shape()[0], 1}) : b;
  const Shape &sa = a2.shape(), &sb = b2.shape();
  if (sa[sa.size() - 1] != sb[sb.size() - 2])
    ops::fail("nx::matmul", "shapes " + to_string(a.shape()) + " and " + to_string(b.shape()) +
                                " do not match for a matrix product");
  Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  auto batch = ops::broadcast_shapes(batch_a, batch_b);
  if (!batch)
    ops::fail("nx::matmul", "batch shapes " + to_string(batch_a) + " and " + to_string(batch_b) + " do not broadcast");
  Shape ta = *batch, tb = *batch;
  ta.insert(ta.end(), sa.end() - 2, sa.end());
  tb.insert(tb.end(), sb.end() - 2, sb.end());
  Tensor c = ops::bind(ops::Prim::matmul, {broadcast_to(a2, ta), broadcast_to(b2, tb)});
  Shape out = *batch;
  if (a.ndim() > 1) out.push_back(sa[sa.size() - 2]);
  if (b.ndim() > 1) out.push_back(sb[sb.size() - 1]);
  return reshape(c, out);
}

// NumPy's dot: a product of scalars, an inner product of vectors, a matrix
// product up to two axes, and beyond, a sum over a's last axis and b's
// second-to-last.
Tensor dot(Operand a, const Tensor& b) {
  const detail::Calling here(a.site());
  const ops::EntryPoint entry("nx::dot");
  std::array<Tensor, 2> operands{a, b};
  ops::check_defined("nx::dot", operands);
  if (a.ndim() == 0 || b.ndim() == 0) return mul(a, b);
  if (a.ndim() <= 2 && b.ndim() <= 2) return matmul(a, b);
  const std::int64_t k = a.shape().back();
  const std::int64_t kb = b.ndim() == 1 ? b.shape()[0] : b.shape()[b.ndim() - 2];
  if (k != kb)
    ops::fail("nx::dot", "shapes " + to_string(a.shape()) + " and " + to_string(b.shape()) + " do not match");
  Tensor bm = b.ndim() == 1 ? reshape(b, {k, 1}) : moveaxis(b, -2, 0);
  // (counted, not -1: a -1 cannot be inferred beside an empty axis)
  const std::int64_t rows = numel(Shape(a.shape().begin(), a.shape().end() - 1));
  const std::int64_t cols = numel(Shape(bm.shape().begin() + 1, bm.shape().end()));
  Tensor product = matmul(reshape(a, {rows, k}), reshape(bm, {k, cols}));
  Shape out(a.shape().begin(), a.shape().end() - 1);
  for (std::int64_t d = 0; d < b.ndim(); ++d)
    if (d != b.ndim() - 2 && b.ndim() > 1) out.push_back(b.shape()[d]);
  return reshape(product, out);
}

}  // namespace nx

namespace nx {

// NumPy's rules: b is a vector when it has one axis, or one axis fewer than a.
Tensor solve(Operand a, const Tensor& b) {
  const detail::Calling here(a.site());
  const ops::EntryPoint entry("nx::solve");
  std::array<Tensor, 2> operands{a, b};
  ops::check_defined("nx::solve", operands);
  if (a.ndim() < 2 || a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    ops::fail("nx::solve", ops::describe(a) + " is not a batch of square matrices");
  const bool vector = b.ndim() == 1 || b.ndim() == a.ndim() - 1;
  Tensor b2 = vector ? expand_dims(b, {-1}) : b;
  if (b2.ndim() < 2) ops::fail("nx::solve", "shapes " + to_string(a.shape()) + " and " + to_string(b.shape()) + " do not fit a linear system");
  Shape batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b2.shape().begin(), b2.shape().end() - 2);
  auto batch = ops::broadcast_shapes(batch_a, batch_b);
  if (!batch)
    ops::fail("nx::solve", "batch shapes " + to_string(batch_a) + " and " + to_string(batch_b) + " do not broadcast");
  Shape ta = *batch, tb = *batch;
  ta.insert(ta.end(), a.shape().end() - 2, a.shape().end());
  tb.insert(tb.end(), b2.shape().end() - 2, b2.shape().end());
  Tensor x = ops::bind(ops::Prim::solve, {broadcast_to(a, ta), broadcast_to(b2, tb)});
  return vector ? squeeze(x, {-1}) : x;
}

Tensor inv(Operand a) {
  const detail::Calling here(a.site());
  const ops::EntryPoint entry("nx::inv");
  std::array<Tensor, 1> operands{a};
  ops::check_defined("nx::inv", operands);
  if (a.ndim() < 2 || a.shape()[a.ndim() - 1] != a.shape()[a.ndim() - 2])
    ops::fail("nx::inv", ops::describe(a) + " is not a batch of square matrices");
  return solve(a, broadcast_to(eye(a.dtype(), a.shape().back()), a.shape()));
}

Tensor cholesky(Operand a) {
  const detail::Calling here(a.site());
  return ops::bind(ops::Prim::cholesky, {a});
}

}  // namespace nx
