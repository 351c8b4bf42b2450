// matmul and dot with NumPy's rules, through cblas and the plain loop.
#include "helpers.hpp"

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
                    "nx::matmul: shapes [2, 3] and [2, 3] do not match for a matrix product");
  CHECK_THROWS_WITH(nx::matmul(nx::scalar(nx::float64, 1), nx::ones(nx::float64, {2})),
                    "nx::matmul: scalar operands have no matrix product (use nx::mul)");
  CHECK_THROWS_WITH(nx::matmul(nx::ones(nx::float64, {2, 2, 2}), nx::ones(nx::float64, {3, 2, 2})),
                    "nx::matmul: batch shapes [2] and [3] do not broadcast");
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
}
