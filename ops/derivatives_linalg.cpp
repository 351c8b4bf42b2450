// Derivative rules of the linear algebra primitives. matmul is bilinear:
// d(a b) = da b + a db, each side transposing with the other's matrix
// transpose; solve is linear in its right-hand side; cholesky's derivative is
// written with solve and matmul, so it is linear in dA.
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

Tensor solved(const Tensor& a, const Tensor& b) { return bind(Prim::solve, {a, b}); }

// x = A^-1 B: dx = A^-1 (dB - dA x).
Tensor solve_jvp(Prim, std::span<const Tensor> x, std::span<const Tensor> t, const Params&, const Tensor& result) {
  Tensor rhs = add_tangents(t[1], zero(t[0]) ? Tensor() : -product(t[0], result));
  return zero(rhs) ? Tensor() : solved(x[0], rhs);
}

// Linear in B only: ct_B = A^-T ct.
void solve_transpose(Prim, const Tensor& ct, std::span<const Tensor> x, std::span<const TensorType>, const Params&,
                     std::span<Tensor> cts) {
  cts[1] = solved(matrix_transpose(x[0]), ct);
}

// The conjugate of complex values (2 Re z - z, exact), real ones as they are.
Tensor conjugate(const Tensor& z) {
  if (!is_complex(z.dtype())) return z;
  return cast(cast(z, z.dtype() == complex64 ? float32 : float64), z.dtype()) * 2. - z;
}

// The conjugate transpose of the last two axes.
Tensor adjoint(const Tensor& t) { return conjugate(matrix_transpose(t)); }

// cholesky factors the Hermitian part of A (ops/family_decompositions.cpp),
// so its tangent is that of the Hermitian part, S = (dA + dA^H) / 2 (the
// symmetric convention of JAX and PyTorch). A = L L^H:
// dL = L Phi(L^-1 S L^-H), Phi the lower triangle with its diagonal halved.
Tensor cholesky_jvp(Prim, std::span<const Tensor>, std::span<const Tensor> t, const Params&, const Tensor& l) {
  if (zero(t[0])) return Tensor();
  const std::int64_t n = l.shape().back();
  std::vector<double> phi(std::size_t(n * n), 0.);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c <= r; ++c) phi[std::size_t(r * n + c)] = r == c ? 0.5 : 1.;
  const Tensor s = (t[0] + adjoint(t[0])) * 0.5;
  Tensor inner = adjoint(solved(l, adjoint(solved(l, s))));
  return product(l, inner * create(l.dtype(), {n, n}, std::span<const double>(phi)));
}

}  // namespace

void register_linalg_derivatives(RuleTable& table) {
  table.define(Prim::matmul, {.jvp = &matmul_jvp, .transpose = &matmul_transpose});
  table.define(Prim::solve, {.jvp = &solve_jvp, .transpose = &solve_transpose});
  table.define(Prim::cholesky, {.jvp = &cholesky_jvp});
}

}  // namespace nx::ops
