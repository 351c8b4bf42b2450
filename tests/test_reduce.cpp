// Reductions: axes, keepdims, identities, NaN, argmax/argmin, determinism.
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include <rune/rune.hpp>

#include "helpers.hpp"
#include "ops/concrete.hpp"
#include "ops/sum_rows.hpp"

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
  CHECK(text(nx::sum(cube, {0, 2})) == "int64 [3] [60, 92, 124]");  // (int32 sums in int64, as NumPy)
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
  CHECK_THROWS_WITH(nx::max(e, {0}), test::Placed("nx::max: axis 0 of float64 [0, 3] is empty, and the reduction has no identity"));
  CHECK(nx::max(e, {1}).shape() == nx::Shape{0});
}

TEST_CASE("axes out of range or repeated are errors") {
  Tensor m = nx::zeros(nx::float64, {2, 3});
  CHECK_THROWS_WITH(nx::sum(m, {2}), test::Placed("nx::sum: axis 2 is out of range for float64 [2, 3]"));
  CHECK_THROWS_WITH(nx::mean(m, {-3}), test::Placed("nx::mean: axis -3 is out of range for float64 [2, 3]"));
  CHECK_THROWS_WITH(nx::prod(m, {1, -1}), test::Placed("nx::prod: an axis is repeated in [1, -1]"));
  CHECK_THROWS_WITH(nx::sum(nx::ones(nx::float64, {2}), {}, false, nx::bool_),
                    test::Placed("nx::sum: dtype=bool is not supported (it takes signed integer, unsigned integer, float or "
                    "complex tensors)"));
  CHECK_THROWS_WITH(nx::prod(nx::ones(nx::int8, {2}), {3}, false, nx::float64),
                    test::Placed("nx::prod: axis 3 is out of range for int8 [2]"));
  CHECK_THROWS_WITH(nx::mean(nx::ones(nx::int32, {2})),
                    test::Placed("nx::mean: int32 [2] is not supported (it takes float or complex tensors)"));
  CHECK_THROWS_WITH(nx::argmax(m, 2), test::Placed("nx::argmax: axis 2 is out of range for float64 [2, 3]"));
}

TEST_CASE("max and min propagate NaN; argmax picks the first maximum, NaN first") {
  Tensor x = f64({4}, {1, std::nan(""), 3, 3});
  CHECK(std::isnan(nx::item(nx::max(x))));
  CHECK(std::isnan(nx::item(nx::min(x))));
  CHECK(text(nx::argmax(x, 0)) == "int32 [] 1");
  CHECK(text(nx::argmax(f64({4}, {1, 3, 0, 3}), 0)) == "int32 [] 1");
  CHECK(text(nx::argmin(f64({2, 3}, {4, 1, 1, 0, 9, -2}), 1)) == "int32 [2] [1, 2]");
  CHECK(text(nx::argmax(f64({2, 3}, {4, 1, 1, 0, 9, -2}), 0)) == "int32 [3] [0, 1, 0]");
  CHECK_THROWS_WITH(nx::argmax(nx::zeros(nx::float64, {0}), 0), test::Placed("nx::argmax: axis 0 of float64 [0] is empty"));
}

TEST_CASE("argmin and argmax of bool values give the first false and the first true (the first element when none)") {
  auto bools = [](std::initializer_list<double> v) { return nx::cast(f64({std::int64_t(v.size())}, v), nx::bool_); };
  CHECK(text(nx::argmin(bools({1, 1, 0, 1, 0}), 0)) == "int32 [] 2");
  CHECK(text(nx::argmax(bools({0, 0, 0, 1, 1}), 0)) == "int32 [] 3");
  CHECK(text(nx::argmin(bools({1, 1, 1}), 0)) == "int32 [] 0");
  CHECK(text(nx::argmax(bools({0, 0, 0}), 0)) == "int32 [] 0");
  const Tensor m = nx::cast(f64({2, 3}, {1, 0, 1, 0, 1, 1}), nx::bool_);
  CHECK(text(nx::argmin(m, 1)) == "int32 [2] [1, 0]");
  CHECK(text(nx::argmax(m, 0)) == "int32 [3] [0, 1, 0]");  // (along a strided axis)
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

// ---- the order of a reduction, the same on every instruction set (this
// file runs again at each RUNE_SIMD level, tests/meson.build)

// The order docs/accuracy.md documents, computed here in scalar code: rows
// in segments of 32768 elements; in each, element i folded into accumulator
// i mod L (L: 128 bytes of them) from the identity, the accumulators then
// combined by halves; the segments' results reduced the same way.
template <class T> T documented_order(const T* x, std::int64_t n, T identity, const std::function<T(T, T)>& op) {
  constexpr std::int64_t lanes = 128 / sizeof(T), segment = 32768;
  auto fold = [&](const T* v, std::int64_t m) {
    std::vector<T> acc(lanes, identity);
    for (std::int64_t i = 0; i < m; ++i) acc[std::size_t(i % lanes)] = op(acc[std::size_t(i % lanes)], v[i]);
    for (std::int64_t w = lanes / 2; w >= 1; w /= 2)
      for (std::int64_t k = 0; k < w; ++k) acc[std::size_t(k)] = op(acc[std::size_t(k)], acc[std::size_t(k + w)]);
    return acc[0];
  };
  if (n <= segment) return fold(x, n);
  std::vector<T> partials;
  for (std::int64_t s = 0; s < n; s += segment) partials.push_back(fold(x + s, std::min(segment, n - s)));
  return documented_order(partials.data(), std::int64_t(partials.size()), identity, op);
}

template <class T> bool same_value_bits(T a, T b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class T> void check_documented_order(nx::DType dtype) {
  const std::function<T(T, T)> add = [](T a, T b) { return a + b; }, mul = [](T a, T b) { return a * b; };
  const std::function<T(T, T)> maximum = [](T a, T b) { return a > b || a != a ? a : b; };
  for (std::int64_t n : {1, 5, 31, 33, 64, 100, 1000, 32768, 32800, 100003, 1'000'001}) {
    // values of many magnitudes and both signs, zeros of both signs among them
    const Tensor x = nx::sin(nx::arange(dtype, 0, double(n))) * nx::exp(nx::cos(nx::arange(dtype, 0, double(n)) * 0.37) * 3.);
    const Tensor factors = nx::exp(nx::sin(nx::arange(dtype, 0, double(n))) * (1. / double(n)));  // (a finite product)
    const Tensor positive = nx::zeros(dtype, {n});
    const Tensor zeros = nx::where(nx::greater(nx::sin(nx::arange(dtype, 0, double(n))), 0.), positive, positive * -1.);
    const std::vector<T> v = nx::to_vector<T>(x), f = nx::to_vector<T>(factors), z = nx::to_vector<T>(zeros);
    INFO(nx::name(dtype) << " [" << n << "]");
    CHECK(same_value_bits(nx::to_vector<T>(nx::sum(x))[0], documented_order<T>(v.data(), n, T(0), add)));
    CHECK(same_value_bits(nx::to_vector<T>(nx::prod(factors))[0], documented_order<T>(f.data(), n, T(1), mul)));
    CHECK(same_value_bits(nx::to_vector<T>(nx::max(zeros))[0],
                          documented_order<T>(z.data(), n, -std::numeric_limits<T>::infinity(), maximum)));
  }
}

TEST_CASE("float sums, products and maxima follow the documented order on every instruction set") {
  check_documented_order<float>(nx::float32);
  check_documented_order<double>(nx::float64);
}

TEST_CASE("rows reduced together, and compiled reductions, give the bits of one row reduced alone") {
  for (std::int64_t n : {3, 50, 513, 40000}) {
    const Tensor x = nx::sin(nx::reshape(nx::arange(nx::float32, 0, double(4 * n)), {4, n}) * 1.7f) * 10.;
    const Tensor rows = nx::sum(x, {1});
    for (std::int64_t r = 0; r < 4; ++r)
      CHECK(same_bits(nx::get(rows, r), nx::sum(nx::get(x, r))));
    // a compiled fused kernel folds its blocks into the sum as it computes them
    auto fused = rune::jit([](const Tensor& t) { return std::pair{nx::sum(nx::exp(t) * 0.5f, {1}), nx::mean(t * t)}; });
    const auto [sums, mean] = fused(x);
    CHECK(same_bits(sums, nx::sum(nx::exp(x) * 0.5f, {1})));
    CHECK(same_bits(mean, nx::mean(x * x)));
  }
}

TEST_CASE("16-bit float reductions accumulate in float32 and round once") {
  // NumPy: mean 0.01, sum 700, mean 1 (its count 70,000 is inf in float16)
  CHECK(text(nx::mean(nx::full(nx::float16, {70000}, 0.01))) == "float16 [] 0.01");
  CHECK(text(nx::sum(nx::full(nx::float16, {70000}, 0.01))) == "float16 [] 700");
  CHECK(text(nx::mean(nx::ones(nx::float16, {140000}))) == "float16 [] 1");
  CHECK(text(nx::mean(nx::ones(nx::float16, {100, 1000}))) == "float16 [] 1");
  CHECK(text(nx::mean(nx::ones(nx::float16, {100, 1000}), {1}, true)) == text(nx::ones(nx::float16, {100, 1})));
  CHECK(text(nx::logsumexp(nx::zeros(nx::float16, {70000}))) == "float16 [] 11.16");
  CHECK(text(nx::mean(nx::full(nx::bfloat16, {70000}, 0.01))) == "bfloat16 [] 0.01");
  CHECK(text(nx::mean(nx::ones(nx::bfloat16, {140000}))) == "bfloat16 [] 1");
  // segments whose results alone overflow float16 (32768 elements a segment)
  const Tensor i = nx::arange(nx::int32, 0, 65536);
  CHECK(text(nx::sum(nx::cast(nx::where(nx::less(i, 32768.), 2., nx::full(nx::float64, {65536}, -2)), nx::float16))) ==
        "float16 [] 0");
  const Tensor halves = nx::where(nx::logical_and(nx::greater_equal(i, 32768.), nx::less(i, 32784.)), 0.5,
                                  nx::ones(nx::float64, {65536}));
  CHECK(text(nx::prod(nx::cast(nx::where(nx::less(i, 16.), 2., halves), nx::float16))) == "float16 [] 1");
  // a sum too large for float16 is inf, as NumPy's
  CHECK(text(nx::sum(nx::ones(nx::float16, {140000}))) == "float16 [] inf");
  // compiled (the VM folds the segments' float32 partials the same way)
  auto compiled = rune::jit([](const Tensor& t) { return std::pair{nx::sum(t * t), nx::mean(t + t)}; });
  const Tensor h = nx::full(nx::float16, {3, 70000}, 0.1);
  const auto [s, m] = compiled(h);
  CHECK(same_bits(s, nx::sum(h * h)));
  CHECK(same_bits(m, nx::mean(h + h)));
  CHECK(text(m) == "float16 [] 0.2");
}

TEST_CASE("sum and prod of integers and bools accumulate in 64 bits, as NumPy's; dtype chooses") {
  // 10,000 int8 values whose sum, 200, would wrap to -56 in int8
  const Tensor small = nx::cast(nx::less(nx::arange(nx::int32, 0, 10000), 200.), nx::int8);
  CHECK(text(nx::sum(small)) == "int64 [] 200");
  CHECK(text(nx::sum(small, {}, false, nx::int8)) == "int8 [] -56");
  CHECK(text(nx::sum(nx::ones(nx::bool_, {2, 3}), {1})) == "int64 [2] [3, 3]");
  CHECK(text(nx::sum(nx::create(nx::uint8, {2}, {200, 100}))) == "uint64 [] 300");
  CHECK(text(nx::prod(nx::full(nx::int8, {20}, 3))) == "int64 [] 3486784401");
  CHECK(text(nx::prod(nx::full(nx::uint32, {2}, 70000))) == "uint64 [] 4900000000");
  CHECK(text(nx::sum(nx::arange(nx::int64, 0, 4), {0}, true)) == "int64 [1] [6]");
  CHECK(text(nx::sum(nx::full(nx::float32, {3}, 0.1), {}, false, nx::float64)) == text(nx::sum(nx::full(nx::float64, {3}, double(0.1f)))));
  CHECK(text(nx::prod(nx::create(nx::int32, {2}, {3, -4}), {}, false, nx::float32)) == "float32 [] -12");
  // compiled, mapped and as program text: the same dtype and value
  auto f = [](const Tensor& t) { return nx::sum(t, {-1}); };
  const Tensor rows = nx::reshape(small, {10, 1000});
  CHECK(text(rune::jit(f)(rows)) == text(f(rows)));
  CHECK(text(rune::vmap(f)(rows)) == text(f(rows)));
  const rune::Program p = rune::parse_program(rune::to_string(rune::program(f, rows)));
  CHECK(text(rune::run(p, {rows})[0]) == text(f(rows)));
  CHECK(f(rows).dtype() == nx::int64);
  // the derivative of a sum accumulated in float64 is in the operand's dtype
  const Tensor g = rune::grad([](const Tensor& t) { return nx::sum(t * t, {}, false, nx::float64); },
                              nx::full(nx::float32, {2}, 3));
  CHECK(text(g) == "float32 [2] [6, 6]");
}

TEST_CASE("a sum over axis 0 as whole-row adds (the ranks' sums: ops/sum_rows.hpp) has nx::sum's bits") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (nx::DType dt : {nx::float32, nx::float64, nx::complex64, nx::complex128, nx::int32, nx::int64, nx::float16})
    for (std::int64_t p : {1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33, 40, 70}) {
      INFO(nx::name(dt) << ", " << p << " rows");
      const bool floating = !nx::is_integer(dt);
      // Columns: every term -0 (the sum is +0), magnitudes far apart (the
      // order shows), an infinity, a NaN, then plain values.
      std::vector<double> v;
      for (std::int64_t i = 0; i < p; ++i) {
        const double scale = i % 3 == 0 ? 1e16 : i % 3 == 1 ? 1.0 : 1e-3;
        v.push_back(floating ? -0.0 : 0.0);
        v.push_back(floating ? scale * unit(rng) : std::round(1e6 * unit(rng)));
        v.push_back(floating && i == p / 2 ? INFINITY : std::round(100 * unit(rng)));
        v.push_back(floating && i == p - 1 ? NAN : std::round(100 * unit(rng)));
        for (int c = 0; c < 3; ++c) v.push_back(floating ? unit(rng) : std::round(1e3 * unit(rng)));
      }
      const Tensor rows = nx::cast(nx::create(nx::float64, {p, 7}, v), dt);
      const Tensor scratch = nx::ops::copy(rows), got = nx::ops::make_tensor(dt, {7});
      nx::ops::sum_rows_into(scratch, got);
      CHECK(same_bits(got, nx::sum(rows, {0}, false, dt)));
    }
}
