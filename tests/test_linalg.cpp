// matmul and dot with NumPy's rules, through cblas and the plain loop.
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

#include <tbb/global_control.h>

#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

TEST_CASE("matmul of matrices, vectors and batches") {
  Tensor a = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f64({3, 2}, {1, 0, 0, 1, 1, 1});
  CHECK(text(nx::matmul(a, b)) == "float64 [2, 2] [[4, 5], [10, 11]]");
  CHECK(text(nx::matmul(a, f64({3}, {1, 1, 1}))) == "float64 [2] [6, 15]");
  CHECK(text(nx::matmul(f64({2}, {1, 1}), a)) == "float64 [3] [5, 7, 9]");
  CHECK(text(nx::matmul(f64({2}, {1, 2}), f64({2}, {3, 4}))) == "float64 [] 11");
  Tensor batch = nx::stack({a, a * 2.});
  CHECK(text(nx::matmul(batch, b)) == "float64 [2, 2, 2] [[[4, 5], [10, 11]], [[8, 10], [20, 22]]]");
  CHECK(nx::matmul(nx::ones(nx::float32, {4, 1, 2, 3}), nx::ones(nx::float32, {5, 3, 2})).shape() ==
        nx::Shape{4, 5, 2, 2});
}

TEST_CASE("matmul reads transposed and strided operands") {
  Tensor a = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(text(nx::matmul(a, nx::transpose(a))) == "float64 [2, 2] [[14, 32], [32, 77]]");
  CHECK(text(nx::matmul(nx::transpose(a), a)) == "float64 [3, 3] [[17, 22, 27], [22, 29, 36], [27, 36, 45]]");
  Tensor every_other = nx::slice(nx::reshape(nx::arange(nx::float64, 0, 12), {2, 6}), {0, 0}, {2, 6}, {1, 2});
  CHECK(text(nx::matmul(every_other, nx::ones(nx::float64, {3, 1}))) == "float64 [2, 1] [[6], [24]]");
  CHECK(text(nx::matmul(nx::broadcast_to(f64({1, 2}, {1, 2}), {2, 2}), f64({2, 1}, {1, 1}))) ==
        "float64 [2, 1] [[3], [3]]");
  // axes of length 1 with stride 0 (a broadcast scalar): cblas still needs a valid leading dimension
  Tensor two = nx::broadcast_to(nx::scalar(nx::float64, 2.), {1, 1});
  CHECK(text(nx::matmul(f64({1, 1}, {1.5}), two)) == "float64 [1, 1] [[3]]");
  CHECK(text(nx::matmul(two, f64({1, 2}, {1, 2}))) == "float64 [1, 2] [[2, 4]]");
  CHECK(text(nx::matmul(f64({2, 1}, {1, 2}), nx::broadcast_to(nx::scalar(nx::float64, 3.), {1, 3}))) ==
        "float64 [2, 3] [[3, 3, 3], [6, 6, 6]]");
}

TEST_CASE("matmul gives a view's bits and a copy's alike, whatever the kernel OpenBLAS picks per layout") {
  // A transposed matrix whose elements are every other one of a buffer:
  // cblas cannot read it, and its copy keeps the transposed layout.
  const Tensor m = nx::sin(nx::reshape(nx::arange(nx::float64, 0, 2 * 39 * 3), {2, 39, 3}) * 0.37);
  const Tensor twice = nx::concatenate({nx::expand_dims(m, {-1}), nx::expand_dims(m, {-1})}, -1);
  const Tensor strided = nx::slice(nx::reshape(twice, {2, 39, 6}), {0, 0, 0}, {2, 39, 6}, {1, 1, 2});
  const Tensor v = nx::cos(nx::reshape(nx::arange(nx::float64, 0, 2 * 39), {2, 39, 1}) * 0.11);
  const Tensor plain = nx::matmul(nx::transpose(m, {0, 2, 1}), v);
  const Tensor through_view = nx::matmul(nx::transpose(strided, {0, 2, 1}), v);
  CHECK(values(plain) == values(through_view));
}

TEST_CASE("a large matmul runs in pieces of its result: each element its row times its column, on any thread count") {
  // Small integers: every sum is exact, so the product must equal a plain loop's.
  auto integers = [](std::int64_t rows, std::int64_t cols, double seed) {
    return nx::floor(nx::abs(nx::sin(nx::reshape(nx::arange(nx::float64, 0, double(rows * cols)), {rows, cols}) * seed)) * 4.);
  };
  auto plain = [](const Tensor& a, const Tensor& b) {
    const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    const std::vector<double> x = nx::to_vector<double>(a), y = nx::to_vector<double>(b);
    std::vector<double> c(std::size_t(m * n), 0.);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t l = 0; l < k; ++l)
        for (std::int64_t j = 0; j < n; ++j) c[std::size_t(i * n + j)] += x[std::size_t(i * k + l)] * y[std::size_t(l * n + j)];
    return c;
  };
  const Tensor wide_a = integers(64, 512, 0.37), wide_b = nx::transpose(integers(1024, 512, 0.11));  // by columns
  const Tensor tall_a = nx::transpose(integers(256, 1024, 0.23)), tall_b = integers(256, 128, 0.71);  // by rows
  for (const auto& [a, b] : {std::pair{wide_a, wide_b}, std::pair{tall_a, tall_b}}) {
    const Tensor c = nx::matmul(a, b);
    CHECK(values(c) == plain(a, b));
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    CHECK(values(nx::matmul(a, b)) == values(c));
  }
}

TEST_CASE("matmul of every numeric dtype") {
  for (nx::DType d : {nx::int32, nx::int64, nx::uint8, nx::float16, nx::bfloat16, nx::float32, nx::complex64,
                      nx::complex128}) {
    Tensor a = nx::create(d, {2, 2}, {1, 2, 3, 4});
    CHECK(values(nx::matmul(a, a)) == std::vector<double>{7, 10, 15, 22});
  }
  CHECK(text(nx::matmul(nx::zeros(nx::float32, {2, 0}), nx::zeros(nx::float32, {0, 3}))) ==
        "float32 [2, 3] [[0, 0, 0], [0, 0, 0]]");
}

TEST_CASE("matmul errors") {
  CHECK_THROWS_WITH(nx::matmul(nx::ones(nx::float64, {2, 3}), nx::ones(nx::float64, {2, 3})),
                    test::Placed("nx::matmul: shapes [2, 3] and [2, 3] do not match for a matrix product"));
  CHECK_THROWS_WITH(nx::matmul(nx::scalar(nx::float64, 1), nx::ones(nx::float64, {2})),
                    test::Placed("nx::matmul: scalar operands have no matrix product (use nx::mul)"));
  CHECK_THROWS_WITH(nx::matmul(nx::ones(nx::float64, {2, 2, 2}), nx::ones(nx::float64, {3, 2, 2})),
                    test::Placed("nx::matmul: batch shapes [2] and [3] do not broadcast"));
  CHECK_THROWS_WITH(nx::matmul(nx::ones(nx::bool_, {2, 2}), nx::ones(nx::bool_, {2, 2})),
                    StartsWith("nx::matmul: bool [2, 2] is not supported"));
}

TEST_CASE("dot follows NumPy") {
  CHECK(text(nx::dot(f64({3}, {1, 2, 3}), f64({3}, {4, 5, 6}))) == "float64 [] 32");
  CHECK(text(nx::dot(nx::scalar(nx::float64, 2), f64({2}, {1, 2}))) == "float64 [2] [2, 4]");
  Tensor a = nx::reshape(nx::arange(nx::float64, 0, 12), {2, 3, 2});
  Tensor b = nx::reshape(nx::arange(nx::float64, 0, 8), {2, 2, 2});
  Tensor d = nx::dot(a, b);
  CHECK(d.shape() == nx::Shape{2, 3, 2, 2});
  // d[i, j, k, m] = sum_l a[i, j, l] b[k, l, m]
  CHECK(nx::item(d, {1, 2, 1, 0}) == 10 * 4 + 11 * 6);
  // empty axes: nothing to sum gives zeros, no rows gives no rows
  CHECK(text(nx::dot(nx::zeros(nx::float64, {1, 2, 0}), nx::zeros(nx::float64, {0}))) == "float64 [1, 2] [[0, 0]]");
  CHECK(nx::dot(nx::zeros(nx::float64, {0, 2, 3}), nx::zeros(nx::float64, {3, 2})).shape() == nx::Shape{0, 2, 2});
}

TEST_CASE("solve, inv and cholesky") {
  Tensor a = f64({2, 2}, {4, 1, 2, 3});
  CHECK(text(nx::solve(a, f64({2}, {1, 2}))) == "float64 [2] [0.1, 0.6]");
  Tensor x = nx::solve(a, f64({2, 2}, {1, 0, 0, 1}));
  CHECK(nx::item(nx::max(nx::abs(x - nx::inv(a)))) == 0);
  CHECK(nx::item(nx::max(nx::abs(nx::matmul(a, nx::inv(a)) - nx::eye(nx::float64, 2)))) < 1e-15);
  // batches broadcast
  Tensor batch = nx::stack({a, a * 2.});
  CHECK(nx::solve(batch, f64({2}, {1, 2})).shape() == nx::Shape{2, 2});
  CHECK(values(nx::get(nx::solve(batch, f64({2}, {1, 2})), 1)) == std::vector<double>{0.05, 0.3});
  Tensor spd = f64({2, 2}, {4, 2, 2, 3});
  Tensor l = nx::cholesky(spd);
  CHECK(nx::item(l, {0, 1}) == 0);
  CHECK(nx::item(nx::max(nx::abs(nx::matmul(l, nx::transpose(l)) - spd))) < 1e-15);
  CHECK(text(nx::cholesky(nx::create(nx::float32, {1, 1}, {9}))) == "float32 [1, 1] [[3]]");
  std::vector<std::complex<double>> z{{2, 0}, {0, 1}, {0, -1}, {2, 0}};
  Tensor h = nx::create(nx::complex128, {2, 2}, z);
  Tensor lc = nx::cholesky(h);
  Tensor back = nx::matmul(lc, nx::transpose(nx::create(nx::complex128, {2, 2}, [&] {
                                  std::vector<std::complex<double>> c = nx::to_vector<std::complex<double>>(lc);
                                  for (auto& e : c) e = std::conj(e);
                                  return c;
                                }())));
  std::vector<std::complex<double>> got = nx::to_vector<std::complex<double>>(back);
  for (std::size_t i = 0; i < 4; ++i) CHECK(std::abs(got[i] - z[i]) < 1e-14);
  CHECK(text(nx::solve(nx::create(nx::float16, {1, 1}, {2}), nx::create(nx::float16, {1}, {3}))) == "float16 [1] [1.5]");
}

TEST_CASE("a singular or indefinite matrix gives NaN; shapes are checked") {
  CHECK(std::isnan(nx::item(nx::solve(f64({2, 2}, {1, 2, 2, 4}), f64({2}, {1, 1})), {0})));
  CHECK(std::isnan(nx::item(nx::cholesky(f64({2, 2}, {1, 2, 2, 1})), {0, 0})));
  CHECK_THROWS_WITH(nx::solve(f64({2, 3}, {1, 2, 3, 4, 5, 6}), f64({2}, {1, 1})),
                    test::Placed("nx::solve: float64 [2, 3] is not a batch of square matrices"));
  CHECK_THROWS_WITH(nx::solve(f64({2, 2}, {1, 0, 0, 1}), f64({3}, {1, 1, 1})),
                    test::Placed("nx::solve: shapes [2, 2] and [3, 1] do not fit a linear system"));
  CHECK_THROWS_WITH(nx::cholesky(f64({3}, {1, 2, 3})), test::Placed("nx::cholesky: float64 [3] is not a batch of square matrices"));
  CHECK_THROWS_WITH(nx::inv(nx::ones(nx::int32, {2, 2})), StartsWith("nx::inv: int32 [2, 2] is not supported"));
}

// cholesky factors the symmetric (Hermitian) part (A + A^H) / 2, as JAX's
// does, so its derivative is the symmetric convention's and central
// differences along any direction agree with it.
TEST_CASE("cholesky factors the symmetric part; its derivative takes dA as (dA + dA^T) / 2") {
  const Tensor a = f64({2, 2}, {4, 1, 1, 3});
  const auto loss = [](const Tensor& v) { return nx::sum(nx::cholesky(v)); };
  CHECK(rune::check_grads(loss, a).ok);
  CHECK(rune::check_grads(loss, a, 1e-6, 1e-7).ok);
  // the gradient is symmetric: each off-diagonal pair shares dL/dA_10 of the lower-triangle reading
  const std::vector<double> g = nx::to_vector<double>(rune::grad(loss, a));
  CHECK(g[1] == g[2]);
  // a matrix that is not symmetric: the factor of its symmetric part
  const Tensor lopsided = f64({2, 2}, {4, 3, -1, 3});
  CHECK(text(nx::cholesky(lopsided)) == text(nx::cholesky(a)));
  CHECK(rune::check_grads(loss, lopsided, 1e-6, 1e-7).ok);
  // a symmetric matrix keeps its bits (nothing is averaged); float32 and batches alike
  const Tensor batch = nx::cast(nx::stack({a, f64({2, 2}, {2, -0.5, -0.5, 5})}), nx::float32);
  CHECK(text(nx::cholesky(batch)) == text(nx::stack({nx::cholesky(nx::get(batch, 0)), nx::cholesky(nx::get(batch, 1))})));
  // compiled, the same bits
  CHECK(same_bits(rune::jit(loss)(lopsided), loss(lopsided)));
  CHECK(same_bits(rune::jit(rune::grad(loss))(lopsided), rune::grad(loss, lopsided)));
  // complex: the Hermitian part, and a tangent's Hermitian part
  using C = std::complex<double>;
  const Tensor h = nx::create(nx::complex128, {2, 2}, std::vector<C>{{2, 0}, {0, 1}, {0, -1}, {2, 0}});
  const Tensor skewed = nx::create(nx::complex128, {2, 2}, std::vector<C>{{2, 0}, {1, 1}, {0, -1}, {2, 0}});
  const Tensor skewed_part = nx::create(nx::complex128, {2, 2}, std::vector<C>{{2, 0}, {0.5, 1}, {0.5, -1}, {2, 0}});
  CHECK(text(nx::cholesky(skewed)) == text(nx::cholesky(skewed_part)));
  const Tensor dh = nx::create(nx::complex128, {2, 2}, std::vector<C>{{1, 0}, {0.3, 0.2}, {-0.1, 0.4}, {0.5, 0}});
  const double eps = 1e-7;
  const Tensor numeric = (nx::cholesky(h + dh * eps) - nx::cholesky(h - dh * eps)) / (2 * eps);
  const Tensor tangent = rune::jvp([](const Tensor& v) { return nx::cholesky(v); }, h, dh).second;
  CHECK(nx::item(nx::max(nx::abs(numeric - tangent))) < 1e-7);
}

TEST_CASE("derivatives of solve, inv and cholesky") {
  Tensor m = f64({2, 2}, {1.5, 0.3, -0.2, 1.1});
  auto through_cholesky = [](const Tensor& v) {
    Tensor spd = nx::matmul(v, nx::transpose(v)) + nx::eye(nx::float64, 2);
    return nx::sum(nx::cholesky(spd) * f64({2, 2}, {1, 0, -2, 3}));
  };
  CHECK(rune::check_grads(through_cholesky, m, 1e-6, 1e-6).ok);
  auto through_inv = [](const Tensor& v) { return nx::sum(nx::inv(v) * f64({2, 2}, {1, 2, 3, 4})); };
  CHECK(rune::check_grads(through_inv, m, 1e-6, 1e-6).ok);
  auto through_solve = [](const std::pair<Tensor, Tensor>& p) { return nx::sum(nx::solve(p.first, p.second)); };
  CHECK(rune::check_grads(through_solve, std::pair{m, f64({2}, {1, -1})}, 1e-6, 1e-6).ok);
}
