// rune::iterate, rune::root and rune::remat: values, errors, and each under
// jvp, grad, vmap and jit, nested in each other.
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <cmath>
#include <string>

#include "rune/detail/autodiff.hpp"
#include "rune/rune.hpp"

#include "helpers.hpp"

using nx::Tensor;

namespace {

Tensor vec(std::vector<double> v) {
  const auto n = std::int64_t(v.size());
  return nx::create(nx::float64, {n}, v);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && nx::to_vector<double>(a) == nx::to_vector<double>(b);
}

// Newton's square root of a, stopping within 1e-12, at most max steps.
auto newton(std::int64_t max) {
  return [max](const Tensor& a) {
    return rune::iterate(
        max, [a](const Tensor& x) { return nx::all(nx::less(nx::abs(x * x - a), 1e-12)); },
        [a](const Tensor& x) { return (x + a / x) / 2.; }, a);
  };
}

}  // namespace

TEST_CASE("iterate: until is tested before each step") {
  std::atomic<int> steps{0};
  auto count = [&](const Tensor& x) {
    return rune::callback(
        [&](const Tensor& v) {
          ++steps;
          return v;
        },
        x, x);
  };
  auto halve = [&](const Tensor& x) {
    return rune::iterate(10, [](const Tensor& v) { return nx::less(v, 1.); }, [&](const Tensor& v) { return count(v) / 2.; }, x);
  };
  CHECK(nx::item(halve(nx::scalar(nx::float64, 0.5))) == 0.5);
  CHECK(steps == 0);
  CHECK(nx::item(halve(nx::scalar(nx::float64, 5.))) == 0.625);
  CHECK(steps == 3);
  CHECK(nx::item(rune::jit(halve)(nx::scalar(nx::float64, 5.))) == 0.625);
  CHECK(steps == 6);
}

TEST_CASE("iterate: the API's errors") {
  CHECK_THROWS_WITH(newton(3)(vec({1e6})), "rune::iterate: until is still false after max = 3 steps");
  CHECK_THROWS_WITH(rune::jit(newton(3))(vec({1e6})), "rune::iterate: until is still false after max = 3 steps");
  CHECK_THROWS_WITH(newton(-1)(vec({4.})), "rune::iterate: max = -1 is negative");
  CHECK_THROWS_WITH(rune::iterate(
                        3, [](const Tensor& x) { return nx::less(x, 1.); }, [](const Tensor& x) { return x; },
                        vec({1., 2.})),
                    "rune::iterate: until must return one boolean, got bool [2]");
  CHECK_THROWS_WITH(rune::iterate(
                        3, [](const Tensor& x) { return nx::all(nx::less(x, 1.)); },
                        [](const Tensor& x) { return nx::concatenate({x, x}); }, vec({1., 2.})),
                    "rune::iterate: the root: shape [4] in the carry the step returned, [2] in the carry it received");
  CHECK_THROWS_WITH(rune::vmap(newton(3))(vec({1., 16., 1e6})),
                    "rune::iterate: until is still false after max = 3 steps, in lane 1");
  auto nested = rune::vmap(rune::vmap([](const Tensor& a) { return newton(3)(a); }));
  CHECK_THROWS_WITH(nested(nx::create(nx::float64, {2, 3}, {1., 1., 1., 1., 1., 1e6})),
                    "rune::iterate: until is still false after max = 3 steps, in lane 1, in lane 2");
}

TEST_CASE("iterate: reaching max raises from the run that reached it") {
  std::atomic<int> steps{0}, asked{0};
  auto counted_step = [&](const Tensor& x) {
    return rune::callback(
               [&](const Tensor& v) {
                 ++steps;
                 return v;
               },
               x, x) +
           1.;
  };
  auto forever = [&](const Tensor& a) {
    return rune::iterate(3, [](const Tensor& x) { return nx::less(x, -1.); }, counted_step, a);
  };
  const Tensor one = nx::scalar(nx::float64, 1.);
  const std::string reached = "rune::iterate: until is still false after max = 3 steps";
  CHECK_THROWS_WITH(forever(one), reached);
  CHECK(steps == 3);
  CHECK_THROWS_WITH(rune::jit(forever)(one), reached);
  CHECK(steps == 6);
  CHECK_THROWS_WITH(rune::vmap(forever)(vec({1., 2.})), reached + ", in lane 0");
  CHECK(steps == 12);  // (a callback runs lane by lane: 2 lanes, 3 trips)
  // An until that asks the host, which says stop from its fifth question on:
  // the loop asked 4 times and reached max.
  auto ask_host = [&](const Tensor& x) {
    return rune::callback([&](const Tensor&) { return nx::scalar(nx::bool_, ++asked >= 5 ? 1. : 0.); },
                          nx::scalar(nx::bool_, 0.), x);
  };
  auto asking = [&](const Tensor& a) { return rune::iterate(3, ask_host, [](const Tensor& x) { return x + 1.; }, a); };
  CHECK_THROWS_WITH(asking(one), reached);
  CHECK(asked == 4);
  asked = 0;
  CHECK_THROWS_WITH(rune::jit(asking)(one), reached);
  CHECK(asked == 4);
}

TEST_CASE("iterate: max = 0 runs no step; a stop at once keeps the carry") {
  CHECK_THROWS(newton(0)(vec({4.})));
  CHECK(same_bits(newton(0)(vec({1.})), vec({1.})));
}

TEST_CASE("iterate under vmap: each lane stops on its own, bit for bit") {
  const Tensor a = vec({1., 16., 1e6, 2.});
  const Tensor mapped = rune::vmap(newton(50))(a);
  for (std::int64_t i = 0; i < 4; ++i)
    CHECK(nx::item(nx::get(mapped, i)) == nx::item(newton(50)(nx::reshape(nx::get(a, i), {1}))));
  CHECK(same_bits(rune::jit(rune::vmap(newton(50)))(a), mapped));
  CHECK(same_bits(rune::vmap(rune::jit(newton(50)))(a), mapped));
}

TEST_CASE("iterate under vmap: a stopped lane computes a running lane's step, and drops it") {
  // The step records the lane index and the carry it is computed at; a lane
  // that stopped (lane 0, at once) must never be stepped at its own carry.
  std::vector<std::pair<double, int>> seen;
  auto step = [&](const Tensor& x) {
    return rune::callback(
        [&](const Tensor& v, const Tensor& lane) {
          seen.emplace_back(nx::item(v), int(nx::item(lane)));
          return v + 1.;
        },
        x, x, rune::lane_index());
  };
  auto count_to = [&](const Tensor& limit) {
    return rune::iterate(10, [limit](const Tensor& x) { return nx::greater_equal(x, limit); }, step,
                         nx::scalar(nx::float64, 0.));
  };
  const Tensor out = rune::vmap(count_to)(vec({0., 2.}));
  CHECK(nx::to_vector<double>(out) == std::vector<double>{0., 2.});
  for (const auto& [value, lane] : seen) CHECK(lane == 1);  // (lane 0 took lane 1's steps)
}

TEST_CASE("iterate under vmap: rune::lanes inside a step whose lanes stop apart throws") {
  rune::Axis a = rune::axis();
  auto f = [a](const Tensor& limit) {
    return rune::iterate(
        10, [limit](const Tensor& x) { return nx::greater_equal(x, limit); },
        [a](const Tensor& x) { return x + nx::sum(rune::lanes(a, x)) * 0. + 1.; }, nx::scalar(nx::float64, 0.));
  };
  CHECK_THROWS_WITH(rune::vmap(f, a)(vec({1., 2.})),
                    "rune::lanes: a lane of rune::iterate that stopped takes no more trips, so a step cannot gather "
                    "every lane; give every lane the same stop");
  // One stop for every lane: the lanes move together and a step gathers them.
  auto together = [a](const Tensor& x0) {
    return rune::iterate(
        3, [a](const Tensor& x) { return nx::greater(nx::max(rune::lanes(a, x)), 10.); },
        [a](const Tensor& x) { return x + nx::sum(rune::lanes(a, x)); }, x0);
  };
  CHECK(same_bits(rune::vmap(together, a)(vec({1., 2.})), vec({13., 14.})));
  CHECK(same_bits(rune::jit(rune::vmap(together, a))(vec({1., 2.})), vec({13., 14.})));
}

TEST_CASE("iterate: derivatives cover the steps taken") {
  const Tensor a = vec({4., 9.});
  auto total = [](const Tensor& v) { return nx::sum(newton(50)(v)); };
  const Tensor g = rune::grad(total, a);
  CHECK(nx::to_vector<double>(g)[0] == Approx(0.25).epsilon(1e-12));
  CHECK(nx::to_vector<double>(g)[1] == Approx(1. / 6).epsilon(1e-12));
  CHECK(rune::check_grads(total, a));
  CHECK(same_bits(rune::jit(rune::grad(total))(a), g));
  auto [y, t] = rune::jvp(newton(50), a, vec({1., 1.}));
  CHECK(same_bits(t, g));
  // grad of vmap and vmap of grad
  const Tensor lanes = vec({1., 16., 1e6});
  const Tensor g1 = rune::grad([](const Tensor& v) { return nx::sum(rune::vmap(newton(50))(v)); }, lanes);
  const Tensor g2 = rune::vmap(rune::grad([](const Tensor& v) { return newton(50)(v); }))(lanes);
  // (lane 0 stops at once: its carry is its input, whose derivative is 1)
  for (std::int64_t i = 0; i < 3; ++i)
    CHECK(nx::item(nx::get(g1, i)) == nx::item(rune::grad(total, nx::reshape(nx::get(lanes, i), {1}))));
  CHECK(nx::to_vector<double>(g1) == nx::to_vector<double>(g2));
}

TEST_CASE("iterate: printed programs parse back, and run") {
  const Tensor a = vec({4., 9.});
  for (const rune::Program& p : {rune::program(newton(50), a), rune::program(rune::vmap(newton(50)), a)}) {
    const rune::Program back = rune::parse_program(rune::to_string(p));
    CHECK(back == p);
  }
  CHECK(same_bits(rune::run(rune::program(newton(50), a), {a})[0], vec({2., 3.})));
}

TEST_CASE("iterate inside scan, scan inside iterate") {
  auto body = [](const Tensor& acc, const Tensor& row) {
    Tensor r = newton(50)(nx::reshape(row, {1}));
    Tensor next = acc + nx::sum(r);
    return std::pair{next, next};
  };
  auto f = [&](const Tensor& xs) { return rune::scan(body, nx::scalar(nx::float64, 0.), xs).first; };
  CHECK(nx::item(f(vec({4., 9., 16.}))) == Approx(9.).epsilon(1e-14));
  CHECK(same_bits(rune::jit(f)(vec({4., 9., 16.})), f(vec({4., 9., 16.}))));
  auto g = [](const Tensor& x0) {
    return rune::iterate(
        5, [](const Tensor& x) { return nx::greater(x, 100.); },
        [](const Tensor& x) {
          return rune::scan([](const Tensor& c, const Tensor& r) { return std::pair{c * r, c}; }, x, vec({2., 3.})).first;
        },
        x0);
  };
  CHECK(nx::item(g(nx::scalar(nx::float64, 1.))) == 216.);
  CHECK(nx::item(rune::grad(g, nx::scalar(nx::float64, 1.))) == 216.);
}

TEST_CASE("root: the value is solve's, the derivative the implicit function theorem's") {
  int solves = 0;
  auto sqrt_root = [&](const Tensor& a) {
    return rune::root([a](const Tensor& x) { return x * x - a; },
                      [&] {
                        ++solves;
                        return newton(50)(a);
                      });
  };
  const Tensor a = vec({4., 9.});
  CHECK(same_bits(sqrt_root(a), vec({2., 3.})));
  auto objective = [&](const Tensor& v) { return nx::sum(sqrt_root(v)); };
  CHECK(same_bits(rune::grad(objective, a), vec({0.25, 1. / 6})));
  CHECK(rune::check_grads(objective, a));
  CHECK(same_bits(rune::jit(rune::grad(objective))(a), vec({0.25, 1. / 6})));
  auto [y, t] = rune::jvp(sqrt_root, a, vec({1., 1.}));
  CHECK(same_bits(t, vec({0.25, 1. / 6})));
  // Mapped, each lane's solve stops on its own (lane 0 a bit before 2): the
  // derivative is 1 / 2x at each lane's point.
  const Tensor x = rune::vmap(sqrt_root)(a);
  const Tensor want = 0.5 / x;
  CHECK(nx::item(nx::max(nx::abs(rune::vmap(rune::grad([&](const Tensor& s) { return sqrt_root(s); }))(a) - want))) < 1e-15);
  CHECK(nx::item(nx::max(nx::abs(rune::grad([&](const Tensor& v) { return nx::sum(rune::vmap(sqrt_root)(v)); }, a) - want))) < 1e-15);
}

TEST_CASE("root: captured values get derivatives; a linear solve replaces nx::solve") {
  // x solves x^3 + c x - b = 0 (one real root for c > 0): dx/db = 1 / (3x^2 + c).
  auto cubic = [](const Tensor& b, const Tensor& c) {
    auto residual = [b, c](const Tensor& x) { return x * x * x + c * x - b; };
    auto solve = [b, c] {
      return rune::iterate(
          100, [b, c](const Tensor& x) { return nx::all(nx::less(nx::abs(x * x * x + c * x - b), 1e-13)); },
          [b, c](const Tensor& x) { return x - (x * x * x + c * x - b) / (3. * x * x + c); }, b);
    };
    return rune::root(residual, solve);
  };
  const Tensor b = vec({2.}), c = vec({1.});  // x = 1
  auto by_b = [&](const Tensor& v) { return nx::sum(cubic(v, c)); };
  auto by_c = [&](const Tensor& v) { return nx::sum(cubic(b, v)); };
  CHECK(nx::item(nx::get(rune::grad(by_b, b), 0)) == Approx(0.25));
  CHECK(nx::item(nx::get(rune::grad(by_c, c), 0)) == Approx(-0.25));
  CHECK(rune::check_grads(by_b, b));
  CHECK(rune::check_grads(by_c, c));
  // The diagonal Jacobian of an elementwise residual, solved by division.
  auto with_ls = [](const Tensor& a) {
    return rune::root([a](const Tensor& x) { return x * x - a; }, [a] { return newton(50)(a); },
                      [](auto op, const Tensor& rhs) { return rhs / op(nx::ones_like(rhs)); });
  };
  const Tensor a = vec({4., 9.});
  CHECK(same_bits(rune::grad([&](const Tensor& v) { return nx::sum(with_ls(v)); }, a), vec({0.25, 1. / 6})));
  CHECK(same_bits(rune::jit(rune::grad([&](const Tensor& v) { return nx::sum(with_ls(v)); }))(a), vec({0.25, 1. / 6})));
  CHECK_THROWS_WITH(rune::save_program(rune::program([&](const Tensor& v) { return with_ls(v); }, a), "/tmp/rune_ls.txt"),
                    Catch::Contains("linear solve"));
}

TEST_CASE("remat: the same values and derivatives, fewer bytes kept") {
  auto layer = rune::remat([](const Tensor& x) { return nx::tanh(nx::sin(x)); });
  auto run = [](auto step) {
    return [step](const Tensor& xs) {
      return rune::scan(
                 [step](const Tensor& acc, const Tensor& row) {
                   Tensor next = step(acc + row);
                   return std::pair{next, next};
                 },
                 nx::scalar(nx::float64, 0.5), xs)
          .first;
    };
  };
  auto plain_step = [](const Tensor& x) { return nx::tanh(nx::sin(x)); };
  const Tensor xs = nx::linspace(nx::float64, -1., 1., 1000);
  const Tensor g_remat = rune::grad(run(layer), xs), g_plain = rune::grad(run(plain_step), xs);
  CHECK(nx::item(nx::max(nx::abs(g_remat - g_plain))) < 1e-12);
  CHECK(same_bits(rune::jit(rune::grad(run(layer)))(xs), g_remat));
  auto [y, t] = rune::jvp(layer, vec({0.3}), vec({1.}));
  CHECK(nx::item(nx::get(t, 0)) == Approx(std::cos(0.3) / std::pow(std::cosh(std::sin(0.3)), 2)));
  CHECK(same_bits(rune::vmap(layer)(vec({0.1, 0.2})), plain_step(vec({0.1, 0.2}))));

  // The bytes the backward pass keeps: the scan stacks each row's residuals.
  auto kept = [&](auto step) {
    rune::detail::Linearization lin("rune::vjp");
    std::vector<Tensor> in = lin.inputs(std::vector<Tensor>{xs});
    lin.finish(std::vector<Tensor>{run(step)(in[0])}, 1);
    return rune::detail::residual_bytes(*lin.linear_map());
  };
  const std::size_t with_remat = kept(layer), without = kept(plain_step);
  INFO("bytes kept: " << with_remat << " with remat, " << without << " without");
  CHECK(with_remat < without);
}

TEST_CASE("Total: adds count once per execution") {
  rune::Total energy;
  const Tensor x = vec({1., 2., 3.});
  energy.add(x);  // no collect open: nothing
  auto step = [&](const Tensor& v) {
    energy.add(nx::sum(v * v));
    return v * 2.;
  };
  auto [y, total] = rune::collect(energy, nx::scalar(nx::float64, 0.), [&] { return step(x); });
  CHECK(same_bits(y, vec({2., 4., 6.})));
  CHECK(nx::item(total) == 14.);
  // Compiled: the add runs with each call, never at the trace.
  auto compiled = rune::jit(step);
  auto [y2, twice] = rune::collect(energy, nx::scalar(nx::float64, 1.), [&] {
    (void)compiled(x);
    return compiled(x);
  });
  CHECK(nx::item(twice) == 29.);
  // In a loop: once per trip; a collect inside jit gives its total as a value.
  auto rows = [&](const Tensor& xs) {
    return rune::collect(energy, nx::scalar(nx::float64, 0.), [&] {
      return rune::scan([&](const Tensor& c, const Tensor& row) {
        energy.add(row);
        return std::pair{c + row, c};
      }, nx::scalar(nx::float64, 0.), xs).first;
    });
  };
  CHECK(nx::item(rows(x).second) == 6.);
  CHECK(nx::item(rune::jit(rows)(x).second) == 6.);
  // Nested collects of one total: the innermost takes the adds.
  auto [inner, outer] = rune::collect(energy, nx::scalar(nx::float64, 0.), [&] {
    energy.add(nx::scalar(nx::float64, 1.));
    return rune::collect(energy, nx::scalar(nx::float64, 0.), [&] {
      energy.add(nx::scalar(nx::float64, 10.));
      return x;
    }).second;
  });
  CHECK(nx::item(inner) == 10.);
  CHECK(nx::item(outer) == 1.);
  CHECK_THROWS_WITH(rune::collect(energy, nx::scalar(nx::float64, 0.), [&] {
                      energy.add(x);
                      return x;
                    }),
                    "rune::Total::add: float64 [3] added to a total of float64 []");
}

TEST_CASE("Total under vmap, grad and remat") {
  rune::Total count;
  const Tensor x = vec({1., 2., 3.});
  auto f = [&](const Tensor& v) {
    count.add(nx::sum(v));
    return v * v;
  };
  // Collected outside the map: the lanes' adds are summed.
  auto [y, summed] = rune::collect(count, nx::scalar(nx::float64, 0.), [&] { return rune::vmap(f)(x); });
  CHECK(nx::item(summed) == 6.);
  // Collected inside the map: one total per lane.
  auto per_lane = rune::vmap([&](const Tensor& v) {
    return rune::collect(count, nx::scalar(nx::float64, 0.), [&] { return f(v); }).second;
  })(x);
  CHECK(same_bits(per_lane, x));
  // A derivative's backward pass adds nothing; the total has no derivative.
  auto [g, under_grad] = rune::collect(count, nx::scalar(nx::float64, 0.), [&] {
    return rune::grad([&](const Tensor& v) { return nx::sum(f(v)); }, x);
  });
  CHECK(same_bits(g, vec({2., 4., 6.})));
  CHECK(nx::item(under_grad) == 6.);
  auto with_total = [&](const Tensor& v) {
    auto [r, t] = rune::collect(count, nx::scalar(nx::float64, 0.), [&] { return f(v); });
    return nx::sum(r) + t * 0.;
  };
  CHECK(same_bits(rune::grad(with_total, x), vec({2., 4., 6.})));
  CHECK(same_bits(rune::jit(rune::grad(with_total))(x), vec({2., 4., 6.})));
  // remat's replay adds nothing either.
  auto layer = rune::remat(f);
  auto [g2, remat_total] = rune::collect(count, nx::scalar(nx::float64, 0.), [&] {
    return rune::grad([&](const Tensor& v) { return nx::sum(layer(v)); }, x);
  });
  CHECK(same_bits(g2, vec({2., 4., 6.})));
  CHECK(nx::item(remat_total) == 6.);
}

namespace {

// What f() adds to t, collected around it.
template <class F> double added(const rune::Total& t, F f) {
  return nx::item(rune::collect(t, nx::scalar(nx::float64, 0.), [&] { return f(); }).second);
}

// f's adds to t collected inside a map: one total per lane.
template <class F> Tensor added_per_lane(const rune::Total& t, F f, const Tensor& xs) {
  return rune::vmap([&](const Tensor& v) {
    return rune::collect(t, nx::scalar(nx::float64, 0.), [&] { return f(v); }).second;
  })(xs);
}

}  // namespace

TEST_CASE("Total: under a map an add counts once per lane, an add the same in every lane too") {
  rune::Total count;
  auto once = [&](const Tensor& v) {
    count.add(nx::scalar(nx::float64, 1.));
    return v * 2.;
  };
  const Tensor five = vec({1., 2., 3., 4., 5.});
  CHECK(added(count, [&] { return rune::vmap(once)(five); }) == 5.);
  CHECK(added(count, [&] { return rune::jit(rune::vmap(once))(five); }) == 5.);
  CHECK(added(count, [&] { return rune::vmap(rune::vmap(once))(nx::reshape(nx::concatenate({five, five}), {2, 5})); }) == 10.);
  CHECK(same_bits(added_per_lane(count, once, five), nx::ones(nx::float64, {5})));
  // A cond whose pred is the same in every lane: every lane takes the branch.
  auto guarded = [&](const Tensor& v) {
    return rune::cond(nx::scalar(nx::bool_, 1.), [&] { return once(v); }, [&] { return v; });
  };
  CHECK(added(count, [&] { return rune::vmap(guarded)(five); }) == 5.);
  CHECK(same_bits(added_per_lane(count, guarded, five), nx::ones(nx::float64, {5})));
  CHECK(same_bits(rune::jit([&](const Tensor& xs) { return added_per_lane(count, guarded, xs); })(five),
                  nx::ones(nx::float64, {5})));
  auto guarded_own = [&](const Tensor& v) {
    return rune::cond(nx::scalar(nx::bool_, 1.), [&] {
      count.add(v);
      return v;
    }, [&] { return v; });
  };
  CHECK(same_bits(added_per_lane(count, guarded_own, five), five));
  // A compiled function called inside the map.
  CHECK(added(count, [&] { return rune::vmap(rune::jit(once))(five); }) == 5.);
}

TEST_CASE("Total: under a map a lane counts the adds of the branch it takes, and of its own trips") {
  rune::Total count;
  auto branchy = [&](const Tensor& v) {
    return rune::cond(nx::greater(v, 0.),
                      [&] {
                        count.add(nx::scalar(nx::float64, 1.));
                        return v;
                      },
                      [&] {
                        count.add(v * -10.);
                        return -v;
                      });
  };
  const Tensor x = vec({1., -1., 2.});
  CHECK(added(count, [&] { return rune::vmap(branchy)(x); }) == 12.);
  CHECK(added(count, [&] { return rune::jit(rune::vmap(branchy))(x); }) == 12.);
  CHECK(same_bits(added_per_lane(count, branchy, x), vec({1., 10., 1.})));
  // Lanes that stop apart: a stopped lane computes its donor's step and
  // adds nothing for it.
  auto climb = [&](const Tensor& v) {
    return rune::iterate(
        10, [](const Tensor& y) { return nx::greater_equal(y, 4.); },
        [&](const Tensor& y) {
          count.add(nx::scalar(nx::float64, 1.));
          return y + 1.;
        },
        v);
  };
  const Tensor starts = vec({0., 2., 4., 1.});
  CHECK(added(count, [&] { return rune::vmap(climb)(starts); }) == 9.);
  CHECK(added(count, [&] { return rune::jit(rune::vmap(climb))(starts); }) == 9.);
  CHECK(same_bits(added_per_lane(count, climb, starts), vec({4., 2., 0., 3.})));
  CHECK(same_bits(rune::jit([&](const Tensor& xs) { return added_per_lane(count, climb, xs); })(starts),
                  vec({4., 2., 0., 3.})));
  // Both at once: a loop in a branch.
  auto climb_if_positive = [&](const Tensor& v) {
    return rune::cond(nx::greater(v, 0.), [&] { return climb(v); }, [&] { return v; });
  };
  CHECK(same_bits(added_per_lane(count, climb_if_positive, starts), vec({0., 2., 0., 3.})));
}

TEST_CASE("Total: derivatives add nothing, so under grad and jvp each add counts once per execution") {
  rune::Total count;
  // Three trips, each adding 1 (and until adding 100 on each of its 4 runs).
  auto three_trips = [&](const Tensor& a) {
    return nx::sum(rune::iterate(
        10,
        [&](const Tensor& y) {
          count.add(nx::scalar(nx::float64, 100.));
          return nx::greater_equal(y, 3.);
        },
        [&](const Tensor& y) {
          count.add(nx::scalar(nx::float64, 1.));
          return y + a;
        },
        a * 0.));
  };
  const Tensor one = nx::scalar(nx::float64, 1.);
  auto tangent = [&](const Tensor& a) { return rune::jvp(three_trips, a, one).second; };
  CHECK(added(count, [&] { return three_trips(one); }) == 403.);
  CHECK(added(count, [&] { return rune::grad(three_trips, one); }) == 403.);
  CHECK(added(count, [&] { return rune::jit(rune::grad(three_trips))(one); }) == 403.);
  CHECK(added(count, [&] { return tangent(one); }) == 403.);
  CHECK(added(count, [&] { return rune::jit(tangent)(one); }) == 403.);
  CHECK(added(count, [&] { return rune::vmap(rune::grad(three_trips))(vec({1., 1.5})); }) == 2. * 403. - 101.);
  // A root's derivative evaluates its residual again: no add.
  auto square_root = [&](const Tensor& a) {
    auto residual = [&](const Tensor& x) {
      count.add(nx::scalar(nx::float64, 1.));
      return x * x - a;
    };
    return rune::root(residual, [&] {
      (void)residual(a);  // (solve runs: its adds count)
      return nx::sqrt(a);
    });
  };
  const Tensor four = nx::scalar(nx::float64, 4.);
  CHECK(added(count, [&] { return square_root(four); }) == 1.);
  CHECK(added(count, [&] { return rune::grad(square_root, four); }) == 1.);
  CHECK(added(count, [&] { return rune::jvp(square_root, four, one).second; }) == 1.);
  CHECK(added(count, [&] { return rune::jit(rune::grad(square_root))(four); }) == 1.);
  // A loop nested in a remat: its replay adds nothing.
  auto summed_rows = [&](const Tensor& xs) {
    return rune::scan([&](const Tensor& c, const Tensor& row) {
             count.add(nx::scalar(nx::float64, 1.));
             return std::pair{c + row * row, c};
           }, nx::scalar(nx::float64, 0.), xs).first;
  };
  const Tensor rows = vec({1., 2., 3.});
  CHECK(added(count, [&] { return rune::grad(summed_rows, rows); }) == 3.);
  CHECK(added(count, [&] { return rune::grad(rune::remat(summed_rows), rows); }) == 3.);
  CHECK(added(count, [&] { return rune::jit(rune::grad(rune::remat(summed_rows)))(rows); }) == 3.);
}

TEST_CASE("Total: a map's lanes add in turn, with the bits of the lanes run one at a time") {
  // A total whose low bits the adds round away as it grows: the sum of the
  // lanes first, then one add, would round once; the lanes in turn round at
  // every add, as a loop over them does.
  rune::Total t;
  const Tensor start = nx::scalar(nx::float64, -2.206715422312056);
  auto six = [&](const Tensor& v) {
    t.add(v);
    return v;
  };
  const Tensor lanes = nx::full(nx::float64, {23}, 6.);
  auto loop_of = [&](std::int64_t count) {
    return rune::collect(t, start, [&] {
      for (std::int64_t i = 0; i < count; ++i) six(nx::scalar(nx::float64, 6.));
      return lanes;
    }).second;
  };
  auto mapped = [&](const Tensor& v) { return rune::collect(t, start, [&] { return rune::vmap(six)(v); }).second; };
  CHECK(nx::item(loop_of(23)) != nx::item(start) + 23. * 6.);  // (the case rounds differently summed first)
  CHECK(same_bits(mapped(lanes), loop_of(23)));
  CHECK(same_bits(rune::jit(mapped)(lanes), loop_of(23)));
  // Nested maps, collected outside both: every inner lane of the first outer
  // lane, then the second's, ...
  const Tensor grid = nx::full(nx::float64, {4, 23}, 6.);
  auto nested = [&](const Tensor& g) {
    return rune::collect(t, start, [&] { return rune::vmap(rune::vmap(six))(g); }).second;
  };
  CHECK(same_bits(nested(grid), loop_of(92)));
  CHECK(same_bits(rune::jit(nested)(grid), loop_of(92)));
  // Collected inside the outer map: each outer lane folds its inner lanes.
  auto per_outer = rune::vmap([&](const Tensor& row) {
    return rune::collect(t, start, [&] { return rune::vmap(six)(row); }).second;
  });
  CHECK(same_bits(per_outer(grid), nx::broadcast_to(loop_of(23), {4})));
  // A lane that does not run (a cond's other branch) adds nothing: a total
  // of -0 stays -0.
  auto maybe = [&](const Tensor& v) {
    return rune::cond(nx::greater(v, 0.), [&] { return six(v); }, [&] { return v; });
  };
  const Tensor none = rune::collect(t, nx::scalar(nx::float64, -0.), [&] {
    return rune::vmap(maybe)(vec({-1., -2.}));
  }).second;
  CHECK(std::signbit(nx::item(none)));
  // The program text names the construct and reads back.
  const rune::Program p = rune::program(mapped, lanes);
  CHECK(rune::to_string(p).find(" = total_add_lanes ") != std::string::npos);
  CHECK(rune::parse_program(rune::to_string(p)) == p);
  CHECK(same_bits(rune::run(p, {lanes})[0], loop_of(23)));
}

TEST_CASE("Total: programs with adds and collects print and parse back") {
  rune::Total t;
  const Tensor x = vec({1., 2.});
  auto f = [&](const Tensor& v) {
    return rune::collect(t, nx::scalar(nx::float64, 0.), [&] {
      t.add(nx::sum(v));
      return v + 1.;
    });
  };
  const rune::Program p = rune::program(f, x);
  CHECK(rune::parse_program(rune::to_string(p)) == p);
  const std::vector<Tensor> out = rune::run(p, {x});
  CHECK(nx::item(out[1]) == 3.);
}

TEST_CASE("remat and collect: derivatives against central differences, jvp against vjp") {
  rune::Total t;
  const Tensor x = vec({0.3, -0.7, 1.1});
  auto layer = rune::remat([](const Tensor& v, const Tensor& w) { return nx::tanh(nx::sin(v) * w); });
  auto through_remat = [&](const Tensor& v) { return nx::sum(layer(v, v * 0.5 + 1.)); };
  auto through_collect = [&](const Tensor& v) {
    auto [r, total] = rune::collect(t, nx::scalar(nx::float64, 0.), [&] {
      t.add(nx::sum(v));
      return nx::exp(v) * v;
    });
    return nx::sum(r) + total * 0.;
  };
  for (auto f : {std::function<Tensor(const Tensor&)>(through_remat), std::function<Tensor(const Tensor&)>(through_collect)}) {
    CHECK(rune::check_grads(f, x));
    const Tensor g = rune::grad(f, x);
    const Tensor direction = vec({1., -2., 0.5});
    auto [y, tangent] = rune::jvp(f, x, direction);
    CHECK(nx::item(tangent) == Approx(nx::item(nx::sum(g * direction))).epsilon(1e-12));
    CHECK(same_bits(rune::jit(rune::grad(f))(x), g));
    // vmap of grad equals the loop of slices stacked
    const Tensor rows = nx::reshape(nx::concatenate({x, x * 2.}), {2, 3});
    const Tensor mapped = rune::vmap(rune::grad(f))(rows);
    for (std::int64_t i = 0; i < 2; ++i) CHECK(same_bits(nx::get(mapped, i), rune::grad(f, nx::get(rows, i))));
  }
}

TEST_CASE("regressions found by the program generator") {
  // Two adds of one value are two adds, compiled too (passes neither merge
  // nor drop effects).
  auto twice = [](const Tensor& a) {
    rune::Total t;
    return rune::collect(t, nx::scalar(nx::float64, 0.), [&] {
             Tensor v = a * 2.;
             t.add(v);
             t.add(v);
             return a;
           })
        .second;
  };
  const Tensor one = nx::scalar(nx::float64, 1.);
  CHECK(nx::item(twice(one)) == 4.);
  CHECK(nx::item(rune::jit(twice)(one)) == 4.);
  // A sub-program that a derivative records in two places prints twice,
  // under names of its own each time, and parses back.
  rune::Total u;
  auto body = [&](const Tensor& x) {
    auto [r, total] = rune::collect(u, nx::scalar(nx::float64, 0.), [&] {
      u.add(nx::scalar(nx::float64, 1.));
      return nx::scalar(nx::float64, 2.);
    });
    return r * x;
  };
  auto j = [&](const Tensor& a) { return rune::remat(body)(a); };
  const rune::Program p = rune::program(rune::grad(j), nx::scalar(nx::float64, 3.));
  CHECK(rune::parse_program(rune::to_string(p)) == p);
  // Forward mode through a collect holding a remat (whose linearization
  // holds a pullback, which runs only backward).
  auto k = [&](const Tensor& a) {
    rune::Total t;
    return rune::collect(t, nx::scalar(nx::float64, 0.), [&] { return rune::remat([](const Tensor& y) { return nx::sin(y); })(a); }).first;
  };
  auto [y, second] = rune::jvp(rune::grad(k), nx::scalar(nx::float64, 0.7), nx::scalar(nx::float64, 1.));
  CHECK(nx::item(second) == Approx(-std::sin(0.7)));
}

TEST_CASE("iterate: derivatives of a loop that stops at once, eagerly and compiled") {
  auto f = [](const Tensor& a) {
    return nx::sum(rune::iterate(
        5, [](const Tensor& x) { return nx::all(nx::less(x, 2.)); }, [](const Tensor& x) { return x / 2.; }, a * 3.));
  };
  CHECK(same_bits(rune::grad(f, vec({0.1, 0.2})), vec({3., 3.})));   // no step taken
  CHECK(same_bits(rune::grad(f, vec({1., 2.})), vec({0.75, 0.75})));  // two steps
  CHECK(same_bits(rune::jit(rune::grad(f))(vec({0.1, 0.2})), vec({3., 3.})));
  CHECK(same_bits(rune::jit(rune::grad(f))(vec({1., 2.})), vec({0.75, 0.75})));
}

TEST_CASE("scan: a step whose rows have no output returns an empty tuple") {
  auto [total, none] = rune::scan([](const Tensor& c, const Tensor& x) { return std::pair{c + x, std::tuple<>{}}; },
                                  nx::scalar(nx::float64, 0.), vec({1., 2., 4.}));
  CHECK(nx::item(total) == 7.);
  static_assert(std::is_same_v<decltype(none), std::tuple<>>);
}

TEST_CASE("scan by length: no xs, the step takes the carry alone") {
  auto step = [](const Tensor& c) { return std::pair{c * 1.5 + 1., c}; };
  const Tensor c0 = nx::scalar(nx::float64, 2.);
  auto [last, ys] = rune::scan(step, c0, 4);
  auto [last_xs, ys_xs] = rune::scan([&](const Tensor& c, const Tensor&) { return step(c); }, c0,
                                     nx::zeros(nx::float64, {4}));
  CHECK(nx::to_string(last) == nx::to_string(last_xs));
  CHECK(nx::to_string(ys) == nx::to_string(ys_xs));
  // compiled, differentiated and mapped as any scan
  auto f = [&](const Tensor& c) { return rune::scan(step, c, 4).first; };
  CHECK(nx::to_string(rune::jit(f)(c0)) == nx::to_string(last));
  CHECK(nx::item(rune::grad(f)(c0)) == 1.5 * 1.5 * 1.5 * 1.5);
  CHECK(nx::to_string(rune::vmap(f)(nx::create(nx::float64, {2}, {2., 0.}))) == "float64 [2] [18.25, 8.125]");
  // zero rows: the carry as given, empty stacks
  auto [same, none] = rune::scan(step, c0, 0);
  CHECK(nx::item(same) == 2.);
  CHECK(none.shape() == nx::Shape{0});
  CHECK_THROWS_WITH(rune::scan(step, c0, -1), "rune::scan: the length is negative (-1)");
}

TEST_CASE("an error inside a construct's function says where the construct was called, and under what") {
  const Tensor xs = nx::ones(nx::float64, {4, 2});
  auto mismatched = [](const Tensor& carry, const Tensor& row) { return std::pair{carry + nx::ones(nx::float64, {3}), row}; };
  const int line = __LINE__ + 1;
  auto loss = [&](const Tensor& x) { return nx::sum(rune::scan(mismatched, nx::zeros(nx::float64, {2}), x).first); };
  const std::string at = "test_loops.cpp:" + std::to_string(line);
  // (the failing call first: `carry + ...` in mismatched, two lines up)
  const std::string failing = "nx::add: shapes [2] and [3] do not broadcast (at test_loops.cpp:" + std::to_string(line - 2);
  CHECK_THROWS_WITH(loss(xs), failing + ", in the step of rune::scan called at " + at + ")");
  CHECK_THROWS_WITH(rune::grad(loss, xs), failing + ", in the step of rune::scan called at " + at + ", under rune::grad)");
  CHECK_THROWS_WITH(rune::jit(rune::grad(loss))(xs),
                    failing + ", in the step of rune::scan called at " + at + ", under rune::grad, under rune::jit)");

  // Nested: the inner construct's place first.
  const int outer = __LINE__ + 2;
  auto nested = [&](const Tensor& x) {
    return rune::scan([&](const Tensor& c, const Tensor& row) { return std::pair{c, loss(nx::reshape(row, {1, 2}))}; },
                      nx::zeros(nx::float64, {}), nx::reshape(x, {4, 1, 2}));
  };
  CHECK_THROWS_WITH(nested(xs), failing + ", in the step of rune::scan called at " + at +
                                    ", in the step of rune::scan called at test_loops.cpp:" + std::to_string(outer) + ")");
  CHECK_THROWS_AS(nested(xs), std::invalid_argument);

  const int iterate_line = __LINE__ + 1;  // (a macro's expansion is at its first line)
  CHECK_THROWS_WITH(rune::iterate(
                        3, [](const Tensor& c) { return nx::greater(c, nx::ones(nx::float64, {2})); },
                        [](const Tensor& c) { return c + 1.; }, nx::zeros(nx::float64, {3})),
                    "nx::greater: shapes [3] and [2] do not broadcast (at test_loops.cpp:" +
                        std::to_string(iterate_line) + ", in the until of rune::iterate called at test_loops.cpp:" +
                        std::to_string(iterate_line) + ")");
  // Reading a stand-in names its construct already: nothing is added.
  CHECK_THROWS_WITH(rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{c + nx::item(row), c}; },
                               nx::scalar(nx::float64, 0.), nx::ones(nx::float64, {3})),
                    "nx::item: the value is traced by rune::scan");
}

TEST_CASE("an error in root's residual, remat's function or collect's body says where they were called") {
  const Tensor a = nx::create(nx::float64, {2}, {4., 9.});
  // (the failing call and the construct are written on one line)
  auto broadcast = [](int line) {
    return "nx::sub: shapes [2] and [3] do not broadcast (at test_loops.cpp:" + std::to_string(line) + ", in ";
  };
  const int root_line = __LINE__ + 1;  // (a macro's expansion is at its first line)
  CHECK_THROWS_WITH(rune::root([&](const Tensor& x) { return x * x - nx::ones(nx::float64, {3}); }, [&] { return nx::sqrt(a); }),
                    broadcast(root_line) + "the residual of rune::root called at test_loops.cpp:" + std::to_string(root_line) + ")");
  const int remat_line = __LINE__ + 1;
  auto heavy = rune::remat([](const Tensor& x) { return nx::sum(x - nx::ones(nx::float64, {3})); });
  CHECK_THROWS_WITH(rune::grad(heavy, a), broadcast(remat_line) + "the function of rune::remat called at test_loops.cpp:" +
                                               std::to_string(remat_line) + ", under rune::grad)");
  rune::Total total;
  auto counted = [&](const Tensor& x) {
    return rune::collect(total, nx::scalar(nx::float64, 0.), [&] { return x - nx::ones(nx::float64, {3}); }).first;
  };
  const int collect_line = __LINE__ - 2;
  CHECK_THROWS_WITH(rune::jit(counted)(a), broadcast(collect_line) + "the body of rune::collect called at test_loops.cpp:" +
                                               std::to_string(collect_line) + ", under rune::jit)");
}

TEST_CASE("root: a residual of another dtype than the point's is refused by root itself") {
  const Tensor a = vec({4., 9.});
  auto narrowed = [](const Tensor& v) {
    return rune::root([v](const Tensor& x) { return nx::cast(x * x - v, nx::float32); }, [v] { return nx::sqrt(v); });
  };
  const std::string refused = "rune::root: the residual returns float32 [2] where the point is float64 [2]";
  CHECK_THROWS_AS(narrowed(a), std::invalid_argument);
  CHECK_THROWS_WITH(narrowed(a), refused);
  CHECK_THROWS_WITH(rune::grad([&](const Tensor& v) { return nx::sum(narrowed(v)); }, a), refused);
  CHECK_THROWS_WITH(rune::jit(narrowed)(a), refused);
  // Several values: each named.
  auto pair = [](const Tensor& v) {
    return rune::root([v](const std::pair<Tensor, Tensor>& x) {
                        return std::pair{x.first - v, nx::cast(x.second, nx::float32)};
                      },
                      [v] { return std::pair{v, nx::zeros(nx::float64, {})}; });
  };
  CHECK_THROWS_WITH(pair(a), "rune::root: the residual returns (float64 [2], float32 []) where the point is "
                             "(float64 [2], float64 [])");
  // The same root in program text: refused where it is parsed.
  const char* text =
      "program (%0)\n"
      "  %1 : float64 [2] at CPU = root point (%0), captures ()\n"
      "    residual\n"
      "      program (%2)\n"
      "        %3 : float32 [2] at CPU = Map [convert<float32>(x0)] (x0: float64 [2] at CPU)\n"
      "          with x0 = %2\n"
      "        return %3\n"
      "  return %1\n";
  CHECK_THROWS_WITH(rune::parse_program(text), "rune::parse_program: line 2, column 29: " + refused);
}

TEST_CASE("every construct under a map of no lanes gives empty results of its type, with derivatives") {
  auto by_newton = [](const Tensor& a) {
    return rune::root([a](const Tensor& x) { return x * x - a; }, [a] { return newton(50)(a); });
  };
  auto by_sqrt = [](const Tensor& a) {
    return rune::root([a](const Tensor& x) { return x * x - a; }, [a] { return nx::sqrt(a); });
  };
  auto branch = [](const Tensor& a) {
    return rune::cond(nx::greater(nx::sum(a), 2.), [a] { return a * a; }, [a] { return a; });
  };
  auto running = [](const Tensor& a) {
    auto step = [](const Tensor& c, const Tensor& e) { return std::pair{c + e, c}; };
    return a * rune::scan(step, nx::scalar(nx::float64, 0.), nx::reshape(a, {-1})).first;
  };
  auto kept = rune::remat([](const Tensor& a) { return nx::sin(a); });
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> constructs{
      {"iterate", newton(50)}, {"root solved by iterate", by_newton}, {"root", by_sqrt},
      {"cond", branch},        {"scan", running},                    {"remat", kept}};
  for (const nx::Shape& shape : {nx::Shape{0}, nx::Shape{0, 2}}) {
    const Tensor none = nx::zeros(nx::float64, shape);
    for (const auto& [name, f] : constructs) {
      INFO(name << " over " << nx::to_string(shape));
      const Tensor want = nx::zeros(nx::float64, shape);
      CHECK(same_bits(rune::vmap(f)(none), want));
      CHECK(same_bits(rune::jit(rune::vmap(f))(none), want));
      auto total = [&](const Tensor& x) { return nx::sum(rune::vmap(f)(x)); };
      CHECK(same_bits(rune::grad(total, none), want));
      CHECK(same_bits(rune::jit(rune::grad(total))(none), want));
      CHECK(same_bits(rune::vmap(rune::grad([&](const Tensor& x) { return nx::sum(f(x)); }))(none), want));
      CHECK(same_bits(rune::jvp(rune::vmap(f), none, none).second, want));
    }
  }
}

TEST_CASE("iterate: a loop that stops at once never computes its step, under jit too (issue 25, 3)") {
  // sqrt's derivative is infinite at 0: a step computed at the input would
  // give 0 * inf.
  auto f = [](const Tensor& a) {
    return nx::sum(rune::iterate(
        5, [](const Tensor& x) { return nx::all(nx::less_equal(x, 2.)); }, [](const Tensor& x) { return nx::sqrt(x); },
        a));
  };
  const Tensor zero = vec({0.});
  CHECK(same_bits(rune::grad(f, zero), vec({1.})));
  CHECK(same_bits(rune::jit(rune::grad(f))(zero), vec({1.})));
  auto [y, t] = rune::jvp(f, zero, vec({1.}));
  CHECK(nx::item(t) == 1.);
  CHECK(nx::item(rune::jit([&](const Tensor& a) { return rune::jvp(f, a, vec({1.})).second; })(zero)) == 1.);
  CHECK(same_bits(rune::hessian(f, zero), nx::zeros(nx::float64, {1, 1})));
  // Lanes that stop apart: lane 0 at once (at 0), lane 1 after steps.
  auto lanes = [&](const Tensor& v) {
    return nx::sum(rune::vmap([&](const Tensor& a) { return f(nx::reshape(a, {1})); })(v));
  };
  const Tensor v = vec({0., 16.});
  const Tensor g = rune::grad(lanes, v);
  CHECK(nx::item(nx::get(g, 0)) == 1.);
  CHECK(nx::item(nx::get(g, 1)) == Approx(1. / 32));  // sqrt(sqrt(x))' at 16
  CHECK(same_bits(rune::jit(rune::grad(lanes))(v), g));
  CHECK(same_bits(rune::vmap(rune::grad([&](const Tensor& a) { return f(nx::reshape(a, {1})); }))(v), g));
}

TEST_CASE("iterate: derivatives cost the trips taken, not max (issue 25, 9b)") {
  // Three nested loops of max = 1,000 that each stop after 2 trips: a
  // masked loop of max trips would cost 1e9 steps.
  using Carry = std::pair<Tensor, Tensor>;  // (value, trips)
  auto twice = [](auto step) {
    return [step](const Tensor& x) {
      return rune::iterate(
                 1000, [](const Carry& c) { return nx::greater_equal(c.second, 2.); },
                 [step](const Carry& c) { return Carry{step(c.first), c.second + 1.}; },
                 Carry{x, nx::scalar(nx::float64, 0.)})
          .first;
    };
  };
  auto inner = twice([](const Tensor& x) { return nx::sin(x) + x; });
  auto middle = twice(inner);
  auto outer = twice(middle);
  const Tensor x = nx::scalar(nx::float64, 0.5);
  const Tensor g = rune::grad(outer, x);
  CHECK(same_bits(rune::jit(rune::grad(outer))(x), g));
  // against the loops unrolled: 8 steps of sin(x) + x
  auto unrolled = [](const Tensor& v) {
    Tensor y = v;
    for (int i = 0; i < 8; ++i) y = nx::sin(y) + y;
    return y;
  };
  CHECK(nx::item(g) == Approx(nx::item(rune::grad(unrolled, x))).epsilon(1e-13));
  auto [y, t] = rune::jvp(outer, x, nx::scalar(nx::float64, 1.));
  CHECK(nx::item(t) == Approx(nx::item(g)).epsilon(1e-13));
  CHECK(nx::item(rune::hessian(outer, x)) ==
        Approx(nx::item(rune::hessian(unrolled, x))).epsilon(1e-12));
  CHECK(rune::check_grads(outer, x));
}
