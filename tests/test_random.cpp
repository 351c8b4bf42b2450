// nx::random: the Threefry-2x32-20 block against the published answers,
// the layout of a key's stream, the same bits eagerly, compiled, from the
// program's text and on any thread count, one stream per lane under vmap,
// keys carried through scan, draws as constants of a gradient, the
// distributions' moments, and the errors.
#include <tbb/global_control.h>

#include <cmath>

#include "helpers.hpp"
#include "ops/threefry.hpp"
#include <rune/rune.hpp>

using Catch::Matchers::StartsWith;
using nx::Tensor;

namespace {

std::vector<std::uint32_t> words(const Tensor& t) { return nx::to_vector<std::uint32_t>(t); }

struct Moments {
  double mean, variance, min, max;
};
Moments moments(const Tensor& t) {
  const std::vector<double> v = test::values(t);
  Moments m{0, 0, v[0], v[0]};
  for (double x : v) m.mean += x, m.min = std::min(m.min, x), m.max = std::max(m.max, x);
  m.mean /= double(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= double(v.size());
  return m;
}

}  // namespace

TEST_CASE("Threefry-2x32-20 gives the known answers of Random123") {
  using nx::ops::threefry2x32;
  using W = nx::ops::Words2x32;
  CHECK(threefry2x32({0, 0}, {0, 0}) == W{0x6b200159, 0x99ba4efe});
  CHECK(threefry2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) == W{0x1cb996fc, 0xbb002be7});
  CHECK(threefry2x32({0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}) == W{0xc4923a9c, 0x483df7a0});
}

TEST_CASE("a key's stream: the words of the blocks at counters 0, 1, ..., in C order") {
  CHECK(words(nx::random::key(0x0000000500000007ull)) == std::vector<std::uint32_t>{5, 7});
  const Tensor key = nx::random::key(42);
  const std::vector<std::uint32_t> five = words(nx::random::bits(key, {5}));
  for (std::uint32_t j = 0; j < 3; ++j) {
    const nx::ops::Words2x32 block = nx::ops::threefry2x32({0, 42}, {j, 0});
    CHECK(five[2 * j] == block[0]);
    if (2 * j + 1 < 5) CHECK(five[2 * j + 1] == block[1]);
  }
  // a shorter draw is a prefix of a longer one, whatever the shape
  const std::vector<std::uint32_t> six = words(nx::random::bits(key, {2, 3}));
  CHECK(std::equal(five.begin(), five.end(), six.begin()));
  CHECK(test::same_bits(nx::random::split(key, 3), nx::random::bits(key, {3, 2})));
  CHECK(nx::random::bits(key, {0, 4}).shape() == nx::Shape{0, 4});
  CHECK(nx::random::split(key, 0).shape() == nx::Shape{0, 2});
}

TEST_CASE("random values are the same bits eagerly, compiled, from the program's text and on one thread") {
  auto draw = [](const Tensor& key) {
    const Tensor keys = nx::random::split(key, 3);
    return std::tuple{nx::random::uniform(nx::get(keys, 0), nx::float32, {70000}, -1, 2),
                      nx::random::normal(nx::get(keys, 1), nx::float64, {70000}),
                      nx::random::normal(nx::get(keys, 2), nx::float16, {3, 5})};
  };
  const Tensor key = nx::random::key(7);
  const auto eager = draw(key);
  auto check_same = [&](const auto& got) {
    CHECK(test::same_bits(std::get<0>(got), std::get<0>(eager)));
    CHECK(test::same_bits(std::get<1>(got), std::get<1>(eager)));
    CHECK(test::same_bits(std::get<2>(got), std::get<2>(eager)));
  };
  check_same(rune::jit(draw)(key));
  const rune::Program program = rune::program(draw, key);
  const rune::Program parsed = rune::parse_program(rune::to_string(program));
  CHECK(parsed == program);
  const std::vector<Tensor> run = rune::run(parsed, {key});
  check_same(std::tuple{run[0], run[1], run[2]});
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    check_same(draw(key));
    check_same(rune::jit(draw)(key));
  }
}

TEST_CASE("random_bits prints as a call with its shape and parses back") {
  const rune::Program p = rune::program([](const Tensor& k) { return nx::random::bits(k, {2, 3}); }, nx::random::key(1));
  const std::string text = rune::to_string(p);
  CHECK_THAT(text, Catch::Matchers::Contains("random_bits(%0) shape=[2, 3]"));
  CHECK(rune::parse_program(text) == p);
}

TEST_CASE("a draw is the same bits on every thread count") {
  const Tensor key = nx::random::key(3);
  const Tensor many = nx::random::bits(key, {1 << 19});  // past the grain: split over threads
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  CHECK(test::same_bits(nx::random::bits(key, {1 << 19}), many));
}

TEST_CASE("under vmap each lane draws from its own key") {
  const Tensor keys = nx::random::split(nx::random::key(11), 4);
  auto draw = [](const Tensor& k) { return nx::random::normal(k, nx::float32, {5}) + nx::random::uniform(k, nx::float32, {5}); };
  std::vector<Tensor> rows;
  for (std::int64_t i = 0; i < 4; ++i) rows.push_back(draw(nx::get(keys, i)));
  CHECK(test::same_bits(rune::vmap(draw)(keys), nx::stack(rows)));
  CHECK(test::same_bits(rune::jit(rune::vmap(draw))(keys), nx::stack(rows)));
  // a shared key: every lane the same
  auto shared = rune::vmap([&](const Tensor& x) { return x + nx::random::uniform(nx::get(keys, 0), nx::float32, {5}); });
  const Tensor out = shared(nx::zeros(nx::float32, {2, 5}));
  CHECK(test::same_bits(nx::get(out, 1), nx::random::uniform(nx::get(keys, 0), nx::float32, {5})));
  // split under a map: one stream per lane too
  auto split_row = rune::vmap([](const Tensor& k) { return nx::random::split(k, 2); });
  CHECK(test::same_bits(nx::get(split_row(keys), 2), nx::random::split(nx::get(keys, 2), 2)));
}

TEST_CASE("a key carried through scan and split at every step") {
  auto step = [](const Tensor& key) {
    const Tensor keys = nx::random::split(key);
    return std::pair{nx::get(keys, 0), nx::random::uniform(nx::get(keys, 1), nx::float64, {2})};
  };
  auto [last, rows] = rune::scan(step, nx::random::key(5), std::int64_t(4));
  Tensor key = nx::random::key(5);
  for (std::int64_t i = 0; i < 4; ++i) {
    auto [next, row] = step(key);
    CHECK(test::same_bits(nx::get(rows, i), row));
    key = next;
  }
  CHECK(test::same_bits(last, key));
}

TEST_CASE("a draw is a constant of a gradient") {
  const Tensor key = nx::random::key(9);
  auto loss = [&](const Tensor& x) { return nx::sum(nx::random::normal(key, nx::float64, {4}) * x); };
  const Tensor x = nx::ones(nx::float64, {4});
  CHECK(test::same_bits(rune::grad(loss, x), nx::random::normal(key, nx::float64, {4})));
  CHECK(test::same_bits(rune::jit(rune::grad(loss))(x), nx::random::normal(key, nx::float64, {4})));
}

TEST_CASE("uniform values lie in [lo, hi) with the moments of the uniform distribution") {
  const std::int64_t n = 1 << 20;
  for (nx::DType dtype : {nx::float64, nx::float32, nx::float16, nx::bfloat16}) {
    INFO(nx::name(dtype));
    const Tensor u = nx::random::uniform(nx::random::key(1), dtype, {n});
    CHECK(u.dtype() == dtype);
    const Moments m = moments(u);
    CHECK(m.min >= 0);
    CHECK(m.max < 1);
    CHECK(std::fabs(m.mean - 0.5) < 0.005);
    CHECK(std::fabs(m.variance - 1. / 12) < 0.005);
    const Moments shifted = moments(nx::random::uniform(nx::random::key(2), dtype, {n}, -3, 5));
    CHECK(shifted.min >= -3);
    CHECK(shifted.max < 5);
    CHECK(std::fabs(shifted.mean - 1) < 0.05);
    CHECK(std::fabs(shifted.variance - 64. / 12) < 0.1);
  }
  // u is m 2^-p exactly: float32 from the top 23 bits of each word
  const std::uint32_t w = words(nx::random::bits(nx::random::key(4), {1}))[0];
  CHECK(nx::item(nx::random::uniform(nx::random::key(4), nx::float32, {1}), {0}) == double(w >> 9) * 0x1p-23);
  // hi - lo rounds: the values still stay below hi
  const Tensor near = nx::random::uniform(nx::random::key(6), nx::float32, {n}, 1, 1 + 0x1p-22);
  CHECK(nx::item(nx::max(near)) < 1 + 0x1p-22);
  // the bound below hi is the largest 16-bit value below hi rounded once: hi = 1 + 2^-11 + 2^-40 is
  // float16's 1 + 2^-10 (through float, a tie rounded to 1), so 1 itself may be drawn
  const double hi = 1.0004882821813226;
  const Tensor half = nx::random::uniform(nx::random::key(7), nx::float16, {1 << 16}, 0.5, hi);
  CHECK(nx::item(nx::max(half)) == 1);
}

TEST_CASE("normal values have mean 0 and variance 1") {
  for (nx::DType dtype : {nx::float64, nx::float32, nx::float16}) {
    INFO(nx::name(dtype));
    const Moments m = moments(nx::random::normal(nx::random::key(8), dtype, {1 << 20}));
    CHECK(std::fabs(m.mean) < 0.005);
    CHECK(std::fabs(m.variance - 1) < 0.01);
  }
}

TEST_CASE("nx::random's errors") {
  const Tensor key = nx::random::key(0);
  CHECK_THROWS_WITH(nx::random::uniform(nx::zeros(nx::float64, {2}), nx::float32, {3}),
                    test::Placed("nx::random::uniform: the key must be uint32 [2], got float64 [2]"));
  CHECK_THROWS_WITH(nx::random::split(nx::zeros(nx::uint32, {2, 2})),
                    test::Placed("nx::random::split: the key must be uint32 [2], got uint32 [2, 2]"));
  CHECK_THROWS_WITH(nx::random::normal(Tensor(), nx::float32, {3}), test::Placed("nx::random::normal: the key holds no value (it was default-constructed)"));
  CHECK_THROWS_WITH(nx::random::split(key, -1), test::Placed("nx::random::split: n = -1 is negative"));
  CHECK_THROWS_WITH(nx::random::uniform(key, nx::int32, {3}), test::Placed("nx::random::uniform: dtype int32 is not a real float dtype"));
  CHECK_THROWS_WITH(nx::random::normal(key, nx::complex64, {3}),
                    test::Placed("nx::random::normal: dtype complex64 is not a real float dtype"));
  CHECK_THROWS_WITH(nx::random::uniform(key, nx::float32, {3}, 1, 1),
                    test::Placed("nx::random::uniform: lo = 1 is not below hi = 1 (both finite)"));
  CHECK_THROWS_WITH(nx::random::bits(key, {-2}), StartsWith("nx::random::bits: shape [-2] has a negative length"));
}
