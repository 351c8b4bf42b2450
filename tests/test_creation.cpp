// Creation and reading: create, scalar, full, zeros/ones(_like), arange,
// linspace, eye, item, to_vector, and their errors.
#include <complex>

#include "helpers.hpp"

using nx::Tensor;
using namespace test;

TEST_CASE("create from a list of doubles converts to the dtype") {
  CHECK(text(nx::create(nx::int32, {3}, {1.9, -2.9, 3})) == "int32 [3] [1, -2, 3]");
  CHECK(text(nx::create(nx::bool_, {2}, {0, 2})) == "bool [2] [false, true]");
  CHECK(text(nx::create(nx::float32, {}, {0.1})) == "float32 [] 0.1");
  CHECK(text(nx::create(nx::float64, {0}, {})) == "float64 [0] []");
}

TEST_CASE("create from a span or vector of any arithmetic type") {
  std::vector<int> ints{1, 2, 3, 4};
  CHECK(text(nx::create(nx::float64, {2, 2}, std::span<const int>(ints))) == "float64 [2, 2] [[1, 2], [3, 4]]");
  std::vector<std::int64_t> big{std::int64_t(1) << 60};
  CHECK(nx::to_vector<std::int64_t>(nx::create(nx::int64, {1}, big))[0] == std::int64_t(1) << 60);
  std::vector<unsigned short> shorts{7, 65535};
  CHECK(nx::to_vector<unsigned short>(nx::create(nx::uint32, {2}, shorts)) == shorts);
  std::vector<bool> flags{true, false};
  CHECK(nx::to_vector<bool>(nx::create(nx::bool_, {2}, flags)) == flags);
  std::vector<float> fs{0.5f, -1.f};
  CHECK(nx::to_vector<float>(nx::create(nx::float32, {2}, fs)) == fs);
  std::vector<std::complex<double>> zs{{1, 2}, {3, -4}};
  CHECK(nx::to_vector<std::complex<double>>(nx::create(nx::complex128, {2}, zs)) == zs);
}

TEST_CASE("a wrong element count names the function, the shape and both counts") {
  CHECK_THROWS_WITH(nx::create(nx::float64, {2, 2}, {1, 2, 3}),
                    "nx::create: shape [2, 2] holds 4 elements, got 3 values");
  CHECK_THROWS_WITH(nx::create(nx::float64, {-1}, {}), "nx::create: shape [-1] has a negative length");
  CHECK_THROWS_WITH(nx::zeros(nx::float64, {2, -3}), "nx::zeros: shape [2, -3] has a negative length");
}

TEST_CASE("scalar, full, zeros, ones and their _like forms") {
  CHECK(text(nx::scalar(nx::float64, 0.5)) == "float64 [] 0.5");
  CHECK(text(nx::full(nx::int64, {2}, 7)) == "int64 [2] [7, 7]");
  CHECK(text(nx::zeros(nx::float32, {2, 1})) == "float32 [2, 1] [[0], [0]]");
  CHECK(text(nx::ones(nx::bool_, {2})) == "bool [2] [true, true]");
  Tensor like = nx::create(nx::int32, {3}, {5, 6, 7});
  CHECK(text(nx::zeros_like(like)) == "int32 [3] [0, 0, 0]");
  CHECK(text(nx::ones_like(like)) == "int32 [3] [1, 1, 1]");
  CHECK(text(nx::full_like(like, -2)) == "int32 [3] [-2, -2, -2]");
}

TEST_CASE("arange, linspace and eye") {
  CHECK(text(nx::arange(nx::int32, 0, 5)) == "int32 [5] [0, 1, 2, 3, 4]");
  CHECK(text(nx::arange(nx::float64, 1, 2, 0.25)) == "float64 [4] [1, 1.25, 1.5, 1.75]");
  CHECK(text(nx::arange(nx::float64, 3, 0, -1)) == "float64 [3] [3, 2, 1]");
  CHECK(text(nx::arange(nx::float64, 3, 0)) == "float64 [0] []");
  CHECK_THROWS_WITH(nx::arange(nx::float64, 0, 1, 0), StartsWith("nx::arange: "));
  // every value is before stop: NumPy's count, ceil((1.3 - 1) / 0.1) = ceil(3.0000000000000004), would
  // reach 1 + 3 * 0.1 = 1.3 (np.arange(1, 1.3, 0.1) has 4 values, the last 1.3000000000000003)
  CHECK(text(nx::arange(nx::float64, 1, 1.3, 0.1)) == "float64 [3] [1, 1.1, 1.2]");
  CHECK(text(nx::arange(nx::float64, 1.3, 1, -0.1)) == "float64 [3] [1.3, 1.2, 1.1]");
  CHECK(text(nx::arange(nx::float64, 1, 1.30001, 0.1)) == "float64 [4] [1, 1.1, 1.2, 1.3]");
  CHECK(text(nx::arange(nx::float64, 0, 1, 0.1)) == "float64 [10] [0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, "
                                                       "0.6000000000000001, 0.7000000000000001, 0.8, 0.9]");
  CHECK(text(nx::linspace(nx::float64, 0, 1, 5)) == "float64 [5] [0, 0.25, 0.5, 0.75, 1]");
  CHECK(text(nx::linspace(nx::float64, 2, 3, 1)) == "float64 [1] [2]");
  CHECK(nx::item(nx::linspace(nx::float64, 0, 0.3, 7), {6}) == 0.3);  // the last is exactly stop
  CHECK_THROWS_WITH(nx::linspace(nx::float64, 0, 1, -1), "nx::linspace: n = -1 is negative");
  CHECK(text(nx::eye(nx::float64, 2)) == "float64 [2, 2] [[1, 0], [0, 1]]");
}

TEST_CASE("item reads one element; with no index the tensor must hold one") {
  Tensor m = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(nx::item(m, {1, 2}) == 6);
  CHECK(nx::item(m, {-1, 0}) == 4);
  CHECK(nx::item(nx::transpose(m), {2, 1}) == 6);
  CHECK(nx::item(nx::scalar(nx::int64, 9)) == 9);
  CHECK(nx::item(nx::ones(nx::float64, {1, 1})) == 1);
  CHECK_THROWS_WITH(nx::item(m), "nx::item: float64 [2, 3] holds 6 elements, not one (give an index)");
  CHECK_THROWS_WITH(nx::item(m, {2, 0}), "nx::item: index [2, 0] is out of range for float64 [2, 3]");
  CHECK_THROWS_WITH(nx::item(m, {0}), "nx::item: index [0] does not have one entry per axis of float64 [2, 3]");
}

TEST_CASE("to_vector reads every element in C order, converted") {
  Tensor m = nx::transpose(f64({2, 2}, {1.5, 2.5, -3.5, 4}));
  CHECK(nx::to_vector<double>(m) == std::vector<double>{1.5, -3.5, 2.5, 4});
  CHECK(nx::to_vector<int>(m) == std::vector<int>{1, -3, 2, 4});
  CHECK(nx::to_vector<float>(nx::scalar(nx::float64, 0.1)) == std::vector<float>{0.1f});
  CHECK(nx::to_vector<double>(nx::zeros(nx::float64, {0, 3})).empty());
}

TEST_CASE("to_vector converts as a cast does: floats saturate, integers wrap, 16-bit unsigned too") {
  const Tensor floats = f64({4}, {-1e6, 70000, 5.7, std::nan("")});
  CHECK(nx::to_vector<std::int16_t>(floats) == std::vector<std::int16_t>{-32768, 32767, 5, 0});
  CHECK(nx::to_vector<std::uint16_t>(floats) == std::vector<std::uint16_t>{0, 65535, 5, 0});
  const Tensor ints = nx::create(nx::int32, {3}, {-1, 70000, 5});
  CHECK(nx::to_vector<std::int16_t>(ints) == std::vector<std::int16_t>{-1, 4464, 5});
  CHECK(nx::to_vector<std::uint16_t>(ints) == std::vector<std::uint16_t>{65535, 4464, 5});
}
