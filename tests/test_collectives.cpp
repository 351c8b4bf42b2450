// Collectives over a named map's lanes (rune/collectives.hpp): each against
// the same computation written out over the lanes by hand (nx functions on
// the stacked lanes, outside any map), bit for bit; compiled against eager;
// derivatives against central differences and their stated transposes; the
// errors, exactly.
#include <utility>
#include <vector>

#include <rune/rune.hpp>

#include "helpers.hpp"

using nx::Tensor;
using test::f64;

namespace {
// Four lanes of a float64 [3] each, awkward sums (no two orders agree).
const Tensor xs = f64({4, 3}, {0.1, 1e16, -3.5, 0.2, 1.0, 1e-3, 0.3, -1e16, 7.25, 1e-8, 2.0, -0.5});

// The lanes of a map as nx sees them outside it: lane i is row i.
Tensor row(std::int64_t i) { return nx::get(xs, i); }

using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;
}  // namespace

TEST_CASE("psum and pmean: the lanes' sum in nx::sum's order, the same in every lane") {
  const rune::Axis a = rune::axis();
  const Tensor sum = nx::sum(xs, {0});
  const Tensor want = nx::stack({sum, sum, sum, sum});
  CHECK(test::same_bits(rune::vmap([&](const Tensor& x) { return rune::psum(a, x); }, a)(xs), want));
  CHECK(test::same_bits(rune::jit(rune::vmap([&](const Tensor& x) { return rune::psum(a, x); }, a))(xs), want));
  // Outside reference, plain doubles: four lanes summed in nx::sum's order
  // (docs/accuracy.md: one accumulator each, then combined by halves).
  const std::vector<double> v = test::values(xs);
  for (std::size_t c = 0; c < 3; ++c) {
    const double by_halves = (v[c] + v[6 + c]) + (v[3 + c] + v[9 + c]);
    CHECK(test::bits(test::values(sum)[c]) == test::bits(by_halves));
  }
  CHECK(test::values(sum)[1] == 3.);  // (in lane order it would be 2: 1e16 + 1 rounds to 1e16)
  const Tensor mean = sum / 4.;
  CHECK(test::same_bits(rune::vmap([&](const Tensor& x) { return rune::pmean(a, x); }, a)(xs),
                        nx::stack({mean, mean, mean, mean})));
  // The outer of two maps: each inner lane sums over the outer lanes.
  const rune::Axis outer = rune::axis();
  auto nested = rune::vmap([&](const Tensor& x) { return rune::vmap([&](const Tensor& e) { return rune::psum(outer, e); })(x); },
                           outer);
  CHECK(test::same_bits(nested(xs), want));
}

TEST_CASE("psum and pmean of a structure: every leaf's") {
  const rune::Axis a = rune::axis();
  struct Both {
    Tensor x, twice;
  };
  auto f = [&](const Tensor& x) {
    auto s = rune::psum(a, std::pair{x, x * 2.});
    auto m = rune::pmean(a, std::vector<Tensor>{x});
    return std::tuple{s.first, s.second, m[0]};
  };
  auto [s, twice, m] = rune::vmap(f, a)(xs);
  const Tensor sum = nx::sum(xs, {0});
  CHECK(test::same_bits(nx::get(s, 2), sum));
  CHECK(test::same_bits(nx::get(twice, 1), nx::sum(xs * 2., {0})));
  CHECK(test::same_bits(nx::get(m, 3), sum / 4.));
}

TEST_CASE("all_gather, ppermute and broadcast_from") {
  const rune::Axis a = rune::axis();
  auto gathered = rune::vmap([&](const Tensor& x) { return rune::all_gather(a, x); }, a)(xs);
  CHECK(gathered.shape() == nx::Shape{4, 4, 3});
  CHECK(test::same_bits(nx::get(gathered, 2), xs));
  // A ring one step on, lane 3 left out as a sender: lane 0 receives nothing.
  const Pairs ring{{0, 1}, {1, 2}, {2, 3}};
  auto shifted = [&](const Tensor& x) { return rune::ppermute(a, x, ring); };
  const Tensor want = nx::stack({nx::zeros(nx::float64, {3}), row(0), row(1), row(2)});
  CHECK(test::same_bits(rune::vmap(shifted, a)(xs), want));
  CHECK(test::same_bits(rune::jit(rune::vmap(shifted, a))(xs), want));
  // One sender, two receivers.
  const Pairs copies{{2, 0}, {2, 3}};
  CHECK(test::same_bits(rune::vmap([&](const Tensor& x) { return rune::ppermute(a, x, copies); }, a)(xs),
                        nx::stack({row(2), nx::zeros(nx::float64, {3}), nx::zeros(nx::float64, {3}), row(2)})));
  auto from_two = [&](const Tensor& x) { return rune::broadcast_from(a, x, 2); };
  CHECK(test::same_bits(rune::vmap(from_two, a)(xs), nx::stack({row(2), row(2), row(2), row(2)})));
}

TEST_CASE("collectives differentiate: psum's transpose is psum, ppermute's the inverse, broadcast's a sum to the root") {
  const rune::Axis a = rune::axis();
  const Tensor w = f64({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  // Each objective weighs every lane's result by its own row of w; its
  // gradient with respect to the lanes' inputs, by hand:
  auto objective = [&](auto collective) {
    return [&, collective](const Tensor& x) {
      return nx::sum(w * rune::vmap([&](const Tensor& lane) { return collective(lane); }, a)(x));
    };
  };
  // psum: every lane's input reaches every lane's result.
  const Tensor column_sums = nx::sum(w, {0});
  CHECK(test::same_bits(rune::grad(objective([&](const Tensor& x) { return rune::psum(a, x); }))(xs),
                        nx::stack({column_sums, column_sums, column_sums, column_sums})));
  // ppermute by the ring: lane i's input reaches lane i + 1's result.
  const Pairs ring{{0, 1}, {1, 2}, {2, 3}};
  CHECK(test::same_bits(rune::grad(objective([&](const Tensor& x) { return rune::ppermute(a, x, ring); }))(xs),
                        nx::stack({nx::get(w, 1), nx::get(w, 2), nx::get(w, 3), nx::zeros(nx::float64, {3})})));
  // broadcast_from 1: only lane 1's input reaches the results, all of them.
  CHECK(test::same_bits(rune::grad(objective([&](const Tensor& x) { return rune::broadcast_from(a, x, 1); }))(xs),
                        nx::stack({nx::zeros(nx::float64, {3}), column_sums, nx::zeros(nx::float64, {3}),
                                   nx::zeros(nx::float64, {3})})));
  // Forward mode against central differences, through a nonlinear use.
  auto f = [&](const Tensor& x) {
    return rune::vmap([&](const Tensor& lane) { return nx::sin(rune::pmean(a, lane * lane)); }, a)(x);
  };
  const Tensor v = f64({4, 3}, {1, -1, 0.5, 0, 2, 1, -0.5, 1, 0, 1, 1, -2});
  const double h = 1e-6;
  const Tensor central = (f(xs * 1e-16 + v * h) - f(xs * 1e-16 - v * h)) / (2 * h);
  const auto [value, tangent] = rune::jvp(f, xs * 1e-16, v);
  const std::vector<double> got = test::values(tangent), want = test::values(central);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-9));
}

TEST_CASE("collectives: their errors") {
  const rune::Axis a = rune::axis();
  const Pairs twice{{0, 1}, {2, 1}};
  CHECK_THROWS_WITH(rune::vmap([&](const Tensor& x) { return rune::ppermute(a, x, twice); }, a)(xs),
                    test::Placed("rune::ppermute: lane 1 is named twice as a receiver"));
  const Pairs outside{{0, 4}};
  CHECK_THROWS_WITH(rune::vmap([&](const Tensor& x) { return rune::ppermute(a, x, outside); }, a)(xs),
                    test::Placed("rune::ppermute: lane 4 is outside an axis of 4 lanes"));
  CHECK_THROWS_WITH(rune::vmap([&](const Tensor& x) { return rune::broadcast_from(a, x, 4); }, a)(xs),
                    test::Placed("rune::broadcast_from: root 4 is outside an axis of 4 lanes"));
  // Outside a map of its axis.
  CHECK_THROWS_WITH(rune::psum(a, xs),
                    test::Placed("rune::psum: no map of this axis is running (name one with rune::vmap(f, axis))"));
  CHECK_THROWS_WITH(rune::vmap([&](const Tensor& x) { return rune::pmean(rune::axis(), x); })(xs),
                    test::Placed("rune::pmean: no map of this axis is running (name one with rune::vmap(f, axis))"));
}
