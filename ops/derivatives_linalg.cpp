// Derivative rules of matmul: bilinear, so d(a b) = da b + a db, and each
// side transposes with the other side's matrix transpose.
#include "ops/derivatives.hpp"

namespace nx::ops {
namespace {

Tensor product(const Tensor& a, const Tensor& b) { return bind(Prim::matmul, {a, b}); }

// Swaps the last two axes.
Tensor matrix_transpose(const Tensor& t) {
  Axes perm;
  for (std::int64_t d = 0; d < t.ndim(); ++d) perm.push_back(d);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(t, perm);
}

Tensor matmul_jvp(Prim, std::span<const Tensor> x, std::span<const Tensor> t, const Params&, const Tensor&) {
  return add_tangents(zero(t[0]) ? Tensor() : product(t[0], x[1]), zero(t[1]) ? Tensor() : product(x[0], t[1]));
}

void matmul_transpose(Prim, const Tensor& ct, std::span<const Tensor> x, std::span<const TensorType>, const Params&,
                      std::span<Tensor> cts) {
  if (zero(x[0])) cts[0] = product(ct, matrix_transpose(x[1]));
  if (zero(x[1])) cts[1] = product(matrix_transpose(x[0]), ct);
}

}  // namespace

void register_linalg_derivatives(Rules* table) {
  table[int(Prim::matmul)].jvp = &matmul_jvp;
  table[int(Prim::matmul)].transpose = &matmul_transpose;
}

}  // namespace nx::ops
