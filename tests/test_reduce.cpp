// Reductions: axes, keepdims, identities, NaN, argmax/argmin, determinism.
#include <cmath>
#include <numeric>

#include "helpers.hpp"

using nx::Tensor;
using namespace test;

TEST_CASE("sum, prod, max, min over all axes and chosen ones") {
  Tensor m = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(text(nx::sum(m)) == "float64 [] 21");
  CHECK(text(nx::sum(m, {0})) == "float64 [3] [5, 7, 9]");
  CHECK(text(nx::sum(m, {1})) == "float64 [2] [6, 15]");
  CHECK(text(nx::sum(m, {-1}, true)) == "float64 [2, 1] [[6], [15]]");
  CHECK(text(nx::sum(m, {0, 1}, true)) == "float64 [1, 1] [[21]]");
  CHECK(text(nx::prod(m, {1})) == "float64 [2] [6, 120]");
  CHECK(text(nx::max(m, {0})) == "float64 [3] [4, 5, 6]");
  CHECK(text(nx::min(m)) == "float64 [] 1");
  CHECK(text(nx::mean(m, {1})) == "float64 [2] [2, 5]");
  CHECK(text(nx::sum(nx::transpose(m), {1})) == "float64 [3] [5, 7, 9]");
  CHECK(text(nx::sum(nx::scalar(nx::float64, 3))) == "float64 [] 3");
  Tensor cube = nx::reshape(nx::arange(nx::int32, 0, 24), {2, 3, 4});
  CHECK(text(nx::sum(cube, {0, 2})) == "int32 [3] [60, 92, 124]");
}

TEST_CASE("all and any give bools over any dtype") {
  Tensor b = nx::create(nx::bool_, {2, 2}, {1, 0, 1, 1});
  CHECK(text(nx::all(b)) == "bool [] false");
  CHECK(text(nx::all(b, {1})) == "bool [2] [false, true]");
  CHECK(text(nx::any(b, {0})) == "bool [2] [true, true]");
  CHECK(text(nx::any(f64({3}, {0, 0, 0.5}))) == "bool [] true");
  // a scalar has no axis to reduce: its element tested alone
  CHECK(text(nx::all(nx::scalar(nx::float64, -1.5))) == "bool [] true");
  CHECK(text(nx::any(nx::scalar(nx::int32, 0))) == "bool [] false");
}

TEST_CASE("empty reductions give the identity, or an error where there is none") {
  Tensor e = nx::zeros(nx::float64, {0, 3});
  CHECK(text(nx::sum(e, {0})) == "float64 [3] [0, 0, 0]");
  CHECK(text(nx::prod(e, {0})) == "float64 [3] [1, 1, 1]");
  CHECK(text(nx::all(e)) == "bool [] true");
  CHECK(text(nx::any(e)) == "bool [] false");
  CHECK(std::isnan(nx::item(nx::mean(nx::zeros(nx::float64, {0})))));
  CHECK_THROWS_WITH(nx::max(e, {0}), "nx::max: axis 0 of float64 [0, 3] is empty, and the reduction has no identity");
  CHECK(nx::max(e, {1}).shape() == nx::Shape{0});
}

TEST_CASE("axes out of range or repeated are errors") {
  Tensor m = nx::zeros(nx::float64, {2, 3});
  CHECK_THROWS_WITH(nx::sum(m, {2}), "nx::sum: axis 2 is out of range for float64 [2, 3]");
  CHECK_THROWS_WITH(nx::mean(m, {-3}), "nx::mean: axis -3 is out of range for float64 [2, 3]");
  CHECK_THROWS_WITH(nx::prod(m, {1, -1}), "nx::prod: an axis is repeated in [1, -1]");
  CHECK_THROWS_WITH(nx::sum(nx::ones(nx::bool_, {2})), StartsWith("nx::sum: bool [2] is not supported"));
  CHECK_THROWS_WITH(nx::mean(nx::ones(nx::int32, {2})),
                    "nx::mean: int32 [2] is not supported (it takes float or complex tensors)");
  CHECK_THROWS_WITH(nx::argmax(m, 2), "nx::argmax: axis 2 is out of range for float64 [2, 3]");
}

TEST_CASE("max and min propagate NaN; argmax picks the first maximum, NaN first") {
  Tensor x = f64({4}, {1, std::nan(""), 3, 3});
  CHECK(std::isnan(nx::item(nx::max(x))));
  CHECK(std::isnan(nx::item(nx::min(x))));
  CHECK(text(nx::argmax(x, 0)) == "int32 [] 1");
  CHECK(text(nx::argmax(f64({4}, {1, 3, 0, 3}), 0)) == "int32 [] 1");
  CHECK(text(nx::argmin(f64({2, 3}, {4, 1, 1, 0, 9, -2}), 1)) == "int32 [2] [1, 2]");
  CHECK(text(nx::argmax(f64({2, 3}, {4, 1, 1, 0, 9, -2}), 0)) == "int32 [3] [0, 1, 0]");
  CHECK_THROWS_WITH(nx::argmax(nx::zeros(nx::float64, {0}), 0), "nx::argmax: axis 0 of float64 [0] is empty");
}

TEST_CASE("logsumexp is stable for large and infinite entries") {
  Tensor x = f64({3}, {1000, 1000, 1000});
  CHECK(nx::item(nx::logsumexp(x)) == Approx(1000 + std::log(3.)));
  CHECK(nx::item(nx::logsumexp(f64({2}, {-INFINITY, -INFINITY}))) == -INFINITY);
  Tensor m = f64({2, 2}, {0, 0, 1, 1});
  CHECK(values(nx::logsumexp(m, {1})) == std::vector<double>{std::log(2.), 1 + std::log(2.)});
  CHECK(nx::logsumexp(m, {1}, true).shape() == nx::Shape{2, 1});
  // complex entries shift by the maximum of their real parts
  Tensor z = nx::create(nx::complex128, {2}, std::vector<std::complex<double>>{{1000, 0}, {1001, 0}});
  CHECK(nx::item(nx::cast(nx::logsumexp(z), nx::float64)) == Approx(1001 + std::log1p(std::exp(-1.))));
}

TEST_CASE("sums are the same bits whatever the length split and thread count") {
  const std::int64_t n = 3'000'001;
  Tensor x = nx::sin(nx::arange(nx::float32, 0, double(n)));
  float whole = nx::to_vector<float>(nx::sum(x))[0];
  float again = nx::to_vector<float>(nx::sum(x))[0];
  CHECK(std::memcmp(&whole, &again, sizeof whole) == 0);
  // float32 sums of many terms stay close to the double sum
  std::vector<float> v = nx::to_vector<float>(x);
  double exact = std::accumulate(v.begin(), v.end(), 0.0);
  CHECK(std::fabs(whole - exact) < 1e-3 * std::sqrt(double(n)));
  // many rows reduced in parallel match rows reduced one at a time
  Tensor rows = nx::reshape(nx::slice(x, {0}, {3'000'000}), {1000, 3000});
  std::vector<float> by_rows = nx::to_vector<float>(nx::sum(rows, {1}));
  for (int r : {0, 517, 999}) {
    float single = nx::to_vector<float>(nx::sum(nx::get(rows, r)))[0];
    CHECK(std::memcmp(&single, &by_rows[std::size_t(r)], sizeof single) == 0);
  }
}

TEST_CASE("integer and half sums") {
  CHECK(text(nx::sum(nx::arange(nx::int64, 0, 100001))) == "int64 [] 5000050000");
  CHECK(text(nx::sum(nx::ones(nx::float16, {1000}))) == "float16 [] 1000");
  CHECK(text(nx::max(nx::create(nx::uint8, {3}, {3, 200, 7}))) == "uint8 [] 200");
  CHECK(text(nx::sum(nx::create(nx::complex64, {2}, {1, 2}))) == "complex64 [] 3+0j");
}
