// rune::cond and rune::switch_: one branch computed (clamped index), bit for
// bit the same under jit, derivatives of the branch taken (forward, reverse,
// second order), vmap with one choice for every lane or one per lane,
// inside scan and iterate, nested, the program text, and the errors.
#include <rune/rune.hpp>

#include "helpers.hpp"

using nx::Tensor;
using test::f64;

namespace {

Tensor positive(const Tensor& x) { return nx::greater(nx::sum(x), 0.); }

// x * x * 2 where x sums positive, else sin(x) + y: the branches read
// different captures.
Tensor branchy(const Tensor& x, const Tensor& y) {
  return rune::cond(positive(x), [&] { return x * x * 2.; }, [&] { return nx::sin(x) + y; });
}

Tensor loss(const Tensor& x) { return nx::sum(branchy(x, x * 3.)); }

// Branch k of three: x + 10, x * x, exp(x).
Tensor three_way(const Tensor& index, const Tensor& x) {
  return rune::switch_<Tensor>(index, {[&] { return x + 10.; }, [&] { return x * x; }, [&] { return nx::exp(x); }});
}

Tensor index(std::int32_t i) { return nx::scalar(nx::int32, double(i)); }

void check_bits(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  const std::vector<double> a = test::values(got), b = test::values(want);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(test::bits(a[i]) == test::bits(b[i]));
}

void check_close(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> a = test::values(got), b = test::values(want);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-12).margin(1e-12));
}

const Tensor up = f64({3}, {0.5, -0.25, 1.5});
const Tensor down = f64({3}, {-0.5, 0.25, -1.5});

}  // namespace

TEST_CASE("cond computes the branch its pred chooses, and only that one") {
  check_bits(branchy(up, up), up * up * 2.);
  check_bits(branchy(down, up), nx::sin(down) + up);
  int then_runs = 0, else_runs = 0;
  auto counted = [&](const Tensor& x) {
    return rune::cond(
        positive(x),
        [&] { return rune::callback([&](const Tensor& v) { return ++then_runs, v * 2.; }, x, x); },
        [&] { return rune::callback([&](const Tensor& v) { return ++else_runs, -v; }, x, x); });
  };
  check_bits(counted(up), up * 2.);
  CHECK((then_runs == 1 && else_runs == 0));
  auto compiled = rune::jit(counted);
  check_bits(compiled(down), -down);
  check_bits(compiled(up), up * 2.);
  CHECK((then_runs == 2 && else_runs == 1));
}

TEST_CASE("cond and switch_ return structures, the same from every branch") {
  auto [value, count] = rune::cond(
      nx::scalar(nx::bool_, 1), [&] { return std::pair{up * 2., nx::scalar(nx::int32, 7)}; },
      [&] { return std::pair{up, nx::scalar(nx::int32, 8)}; });
  check_bits(value, up * 2.);
  CHECK(nx::item(count) == 7);
  using Result = std::tuple<Tensor, Tensor>;
  auto [a, b] = rune::switch_<Result>(index(1), {[&] { return Result{up, down}; }, [&] { return Result{down, up}; }});
  check_bits(a, down);
  check_bits(b, up);
}

TEST_CASE("switch_ clamps its index into the branches, in any integer dtype") {
  check_bits(three_way(index(0), up), up + 10.);
  check_bits(three_way(index(1), up), up * up);
  check_bits(three_way(index(2), up), nx::exp(up));
  check_bits(three_way(index(-1), up), up + 10.);
  check_bits(three_way(index(3), up), nx::exp(up));
  check_bits(three_way(nx::scalar(nx::int64, 1e12), up), nx::exp(up));
  check_bits(three_way(nx::scalar(nx::uint8, 1), up), up * up);
  check_bits(rune::switch_<Tensor>(index(5), {[&] { return up; }}), up);
}

TEST_CASE("jit equals eager bit for bit and traces once for every index") {
  auto compiled = rune::jit(branchy);
  check_bits(compiled(up, down), branchy(up, down));
  check_bits(compiled(down, up), branchy(down, up));
  CHECK(compiled.traces() == 1);
  auto switched = rune::jit(three_way);
  for (std::int32_t i = -1; i <= 3; ++i) check_bits(switched(index(i), up), three_way(index(i), up));
  CHECK(switched.traces() == 1);
}

TEST_CASE("the derivative of cond is the branch taken's") {
  CHECK(rune::check_grads(loss, up).ok);
  CHECK(rune::check_grads(loss, down).ok);
  check_close(rune::grad(loss)(up), up * 4.);
  check_close(rune::grad(loss)(down), nx::cos(down) + 3.);
  auto switched = [](const Tensor& x) { return nx::sum(three_way(nx::cast(nx::sum(x), nx::int32), x)); };
  check_close(rune::grad(switched)(f64({2}, {0.5, 0.75})), f64({2}, {1, 1.5}));
  check_close(rune::grad(switched)(f64({2}, {0.25, 1.25})), f64({2}, {0.5, 2.5}));
  check_close(rune::grad(switched)(f64({2}, {1.5, 1})), nx::exp(f64({2}, {1.5, 1})));
  CHECK(rune::check_grads(switched, f64({2}, {0.25, 1.25})).ok);
}

TEST_CASE("jvp agrees with vjp through cond, and grad under jit with grad") {
  const Tensor v = f64({3}, {1, -2, 0.5}), u = f64({3}, {0.25, 1, -1});
  for (const Tensor& x : {up, down}) {
    auto f = [](const Tensor& p) { return branchy(p, p * 3.); };
    auto [y, tangent] = rune::jvp(f, x, v);
    auto [y2, pullback] = rune::vjp(f, x);
    check_bits(y, y2);
    CHECK(nx::item(nx::sum(tangent * u)) == Approx(nx::item(nx::sum(pullback(u) * v))).epsilon(1e-12));
    check_bits(rune::jit(rune::grad(loss))(x), rune::grad(loss)(x));
  }
}

TEST_CASE("cond has second derivatives") {
  auto cube_or_square = [](const Tensor& x) {
    return rune::cond(nx::greater(x, 0.), [&] { return x * x * x; }, [&] { return x * x; });
  };
  CHECK(nx::item(rune::grad(rune::grad(cube_or_square))(nx::scalar(nx::float64, 2))) == 12);
  CHECK(nx::item(rune::grad(rune::grad(cube_or_square))(nx::scalar(nx::float64, -2))) == 2);
  check_close(rune::hessian(loss, up), f64({3, 3}, {4, 0, 0, 0, 4, 0, 0, 0, 4}));
}

TEST_CASE("vmap with one pred for every lane is one cond of mapped branches") {
  const Tensor xs = f64({2, 3}, {1, 2, 3, -4, 5, 6});
  for (bool flag : {true, false}) {
    const Tensor pred = nx::scalar(nx::bool_, flag);
    // then gives every lane the same value: it is broadcast to the lanes
    auto f = [&](const Tensor& r) { return rune::cond(pred, [&] { return up; }, [&] { return r * 2.; }); };
    check_bits(rune::vmap(f)(xs), nx::stack({f(nx::get(xs, 0)), f(nx::get(xs, 1))}));
    rune::Program p = rune::program(rune::vmap(f), xs);
    CHECK(rune::to_string(p).find("cond index") != std::string::npos);
  }
}

TEST_CASE("vmap with a pred or index per lane selects each lane's branch") {
  const Tensor xs = f64({3, 3}, {1, 2, 3, -4, -5, 6, 0.5, -0.25, 1});
  auto f = [](const Tensor& r) { return branchy(r, r * 3.); };
  std::vector<Tensor> rows;
  for (std::int64_t i = 0; i < 3; ++i) rows.push_back(f(nx::get(xs, i)));
  check_bits(rune::vmap(f)(xs), nx::stack(rows));
  check_bits(rune::jit(rune::vmap(f))(xs), nx::stack(rows));
  const Tensor indices = nx::create(nx::int32, {4}, {-1, 1, 2, 7});
  const Tensor x4 = f64({4, 2}, {1, 2, 3, 4, 0.5, 0.25, -1, -2});
  rows.clear();
  for (std::int64_t i = 0; i < 4; ++i) rows.push_back(three_way(nx::get(indices, i), nx::get(x4, i)));
  check_bits(rune::vmap(three_way)(indices, x4), nx::stack(rows));
}

TEST_CASE("grad of vmap and vmap of grad through cond") {
  const Tensor xs = f64({3, 3}, {1, 2, 3, -4, -5, 6, 0.5, -0.25, 1});
  std::vector<Tensor> rows;
  for (std::int64_t i = 0; i < 3; ++i) rows.push_back(rune::grad(loss)(nx::get(xs, i)));
  check_close(rune::vmap(rune::grad(loss))(xs), nx::stack(rows));
  check_close(rune::grad([](const Tensor& m) { return nx::sum(rune::vmap(loss)(m)); })(xs), nx::stack(rows));
  // one pred for every lane
  auto shared = [](const Tensor& m) {
    return nx::sum(rune::vmap([&](const Tensor& r) {
      return rune::cond(positive(m), [&] { return r * r; }, [&] { return nx::sin(r) * nx::sum(m); });
    })(m));
  };
  CHECK(rune::check_grads(shared, xs).ok);
}

TEST_CASE("cond inside scan and iterate bodies") {
  // halve the carry above 10, else triple it and add the row
  auto step = [](const Tensor& c, const Tensor& x) {
    Tensor next = rune::cond(nx::greater(c, 10.), [&] { return c * 0.5; }, [&] { return c * 3. + x; });
    return std::pair{next, next};
  };
  const Tensor xs = f64({5}, {1, 2, 3, 4, 5});
  auto run = [&](const Tensor& init) { return rune::scan(step, init, xs).second; };
  CHECK(test::text(run(nx::scalar(nx::float64, 1))) == "float64 [5] [4, 14, 7, 25, 12.5]");
  CHECK(rune::check_grads([&](const Tensor& c) { return nx::sum(run(c)); }, nx::scalar(nx::float64, 1)).ok);
  check_bits(rune::jit(run)(nx::scalar(nx::float64, 1)), run(nx::scalar(nx::float64, 1)));
  auto grow = [](const Tensor& init) {
    return rune::iterate(
        20, [](const Tensor& c) { return nx::greater(c, 100.); },
        [](const Tensor& c) { return rune::cond(nx::less(c, 5.), [&] { return c * 2.; }, [&] { return c + 10.; }); },
        init);
  };
  CHECK(nx::item(grow(nx::scalar(nx::float64, 1))) == 108);
  CHECK(nx::item(rune::grad(grow)(nx::scalar(nx::float64, 1))) == 8);
  CHECK(test::text(rune::vmap(grow)(f64({2}, {1, 3}))) == "float64 [2] [108, 106]");
}

TEST_CASE("conds nest") {
  auto nested = [](const Tensor& x) {
    return rune::cond(
        nx::greater(nx::sum(x), 0.),
        [&] { return three_way(nx::cast(nx::sum(x), nx::int32), x); },
        [&] { return rune::cond(nx::less(nx::sum(x), -1.), [&] { return -x; }, [&] { return x * 3.; }); });
  };
  check_bits(nested(f64({2}, {0.5, 0.75})), f64({2}, {0.25, 0.5625}));
  check_bits(nested(f64({2}, {-0.5, -0.75})), f64({2}, {0.5, 0.75}));
  check_bits(nested(f64({2}, {-0.5, 0.25})), f64({2}, {-1.5, 0.75}));
  auto total = [&](const Tensor& x) { return nx::sum(nested(x)); };
  CHECK(rune::check_grads(total, f64({2}, {0.25, 1.25})).ok);
  CHECK(rune::check_grads(total, f64({2}, {-0.5, 0.25})).ok);
  const Tensor xs = f64({3, 2}, {0.5, 0.75, -0.5, -0.75, -0.5, 0.25});
  check_bits(rune::vmap(nested)(xs), nx::stack({nested(nx::get(xs, 0)), nested(nx::get(xs, 1)), nested(nx::get(xs, 2))}));
}

TEST_CASE("a program with conds prints and parses back") {
  rune::Program p = rune::program(branchy, up, down);
  const std::string text = rune::to_string(p);
  CHECK(text.find("= cond index (") != std::string::npos);
  CHECK(text.find("    branch\n") != std::string::npos);
  CHECK(rune::parse_program(text) == p);
  rune::Program switched = rune::program(three_way, index(0), up);
  CHECK(rune::parse_program(rune::to_string(switched)) == switched);
  rune::Program derived = rune::program(rune::grad(loss), up);
  CHECK(rune::parse_program(rune::to_string(derived)) == derived);
  check_bits(rune::run(derived, {down})[0], rune::grad(loss)(down));
  rune::Program mapped = rune::program(rune::vmap(three_way), nx::create(nx::int32, {2}, {0, 2}), f64({2, 1}, {1, 2}));
  CHECK(rune::parse_program(rune::to_string(mapped)) == mapped);
}

TEST_CASE("the text of a cond is checked") {
  const std::string text =
      "program (%0 : int32 [] at CPU, %1)\n"
      "  %2 : float64 [] at CPU = cond index (%0), operands (%1)\n"
      "    branch\n"
      "      program (%3)\n"
      "        return %3\n"
      "    branch\n"
      "      program (%4)\n"
      "        %5 : float64 [] at CPU = Map [neg(x0)] (x0: float64 [] at CPU)\n"
      "          with x0 = %4\n"
      "        return %5\n"
      "  return %2\n";
  rune::Program p = rune::parse_program(text);
  CHECK(rune::to_string(p) == text);
  CHECK(nx::item(rune::run(p, {index(1), nx::scalar(nx::float64, 2)})[0]) == -2);
  CHECK(nx::item(rune::run(p, {index(-3), nx::scalar(nx::float64, 2)})[0]) == 2);
  std::string float_index = text;
  float_index.replace(float_index.find("%0 : int32"), 10, "%0 : float64");
  std::string two_indices = text;
  two_indices.replace(two_indices.find("index (%0)"), 10, "index (%0, %1)");
  CHECK_THROWS_WITH(rune::parse_program(float_index), Contains("rune::cond: the index is float64 [], not one int32"));
  CHECK_THROWS_WITH(rune::parse_program(two_indices), Contains("rune::cond: the index is one value, not 2"));
}

TEST_CASE("cond's and switch_'s errors") {
  auto same = [] { return up; };
  CHECK_THROWS_WITH(rune::cond(nx::zeros(nx::bool_, {2}), same, same),
                    "rune::cond: pred must be one boolean, got bool [2]");
  CHECK_THROWS_WITH(rune::cond(nx::scalar(nx::float64, 1), same, same),
                    "rune::cond: pred must be one boolean, got float64 []");
  CHECK_THROWS_WITH(rune::cond(Tensor(), same, same), "rune::cond: pred must be one boolean, got no value");
  CHECK_THROWS_WITH(rune::cond(nx::scalar(nx::bool_, 1), same, [] { return f64({2}, {1, 2}); }),
                    "rune::cond: the root: shape [2] in the else branch's result, [3] in the then branch's");
  CHECK_THROWS_WITH(rune::cond(nx::scalar(nx::bool_, 1), same, [] { return nx::zeros(nx::float32, {3}); }),
                    "rune::cond: the root: dtype float32 in the else branch's result, float64 in the then branch's");
  CHECK_THROWS_WITH(rune::cond(nx::scalar(nx::bool_, 1), same, [] { return Tensor(); }),
                    "rune::cond: the result holds no value (it was default-constructed)");
  CHECK_THROWS_WITH(rune::switch_<Tensor>(index(0), {}), "rune::switch_: there are no branches");
  CHECK_THROWS_WITH(rune::switch_<Tensor>(nx::scalar(nx::float64, 0), {same}),
                    "rune::switch_: index must be one integer, got float64 []");
  CHECK_THROWS_WITH(rune::switch_<Tensor>(nx::zeros(nx::int32, {1}), {same}),
                    "rune::switch_: index must be one integer, got int32 [1]");
  using Pair = std::pair<Tensor, Tensor>;
  CHECK_THROWS_WITH(
      rune::switch_<Pair>(index(0), {[] { return Pair{up, up}; }, [] { return Pair{up, up}; },
                                     [] { return Pair{up, f64({1}, {1})}; }}),
      "rune::switch_: 1: shape [1] in branch 2's result, [3] in branch 0's");
  using Many = std::vector<Tensor>;
  CHECK_THROWS_WITH(rune::switch_<Many>(index(0), {[] { return Many{up}; }, [] { return Many{up, up}; }}),
                    "rune::switch_: the root: length 2 in branch 1's result, length 1 in branch 0's");
}

TEST_CASE("an error inside a branch says where the cond was called") {
  const Tensor x = nx::ones(nx::float64, {2});
  const int line = __LINE__ + 1;  // (a macro's expansion is at its first line)
  CHECK_THROWS_WITH(rune::cond(nx::scalar(nx::bool_, 1), [&] { return x + nx::ones(nx::float64, {3}); }, [&] { return x; }),
                    "nx::add: shapes [2] and [3] do not broadcast (at test_cond.cpp:" + std::to_string(line) +
                        ", in a branch of rune::cond called at test_cond.cpp:" + std::to_string(line) + ")");
}

namespace {

// sqrt(x) where x > 0, else 0 * x: sqrt's derivative is infinite at 0 and
// NaN below, where the branch is not taken.
Tensor guarded_sqrt(const Tensor& x) {
  return rune::cond(nx::greater(x, 0.), [&] { return nx::sqrt(x); }, [&] { return x * 0.; });
}

// Newton's square root of a, stopping within 1e-12 (at most max steps).
Tensor newton(const Tensor& a, std::int64_t max) {
  return rune::iterate(
      max, [a](const Tensor& x) { return nx::less(nx::abs(x * x - a), 1e-12); },
      [a](const Tensor& x) { return (x + a / x) / 2.; }, a);
}

Tensor summed(const Tensor& x, Tensor (*f)(const Tensor&)) { return nx::sum(rune::vmap(f)(x)); }

}  // namespace

TEST_CASE("vmap with a per-lane pred: the untaken branch's derivative does not leak (issue 25, 9a)") {
  const Tensor x = f64({3}, {4, -1, 0});
  const Tensor want = f64({3}, {0.25, 0, 0});
  const Tensor per_lane = rune::vmap(rune::grad(guarded_sqrt))(x);
  check_bits(per_lane, want);
  auto of_sum = [](const Tensor& v) { return summed(v, guarded_sqrt); };
  check_bits(rune::grad(of_sum)(x), want);
  check_bits(rune::jit(rune::grad(of_sum))(x), want);
  check_bits(rune::jit(rune::vmap(rune::grad(guarded_sqrt)))(x), want);
  // forward mode and second order: sqrt's at 4, nothing elsewhere
  check_bits(rune::jacfwd(rune::vmap(guarded_sqrt), x), f64({3, 3}, {0.25, 0, 0, 0, 0, 0, 0, 0, 0}));
  check_close(rune::hessian(of_sum, x), f64({3, 3}, {-1. / 32, 0, 0, 0, 0, 0, 0, 0, 0}));
  // switch_ with three branches, each finite only where it is taken
  const Tensor indices = nx::create(nx::int32, {3}, {0, 1, 2});
  const Tensor at = f64({3}, {4, 2, -3});
  auto three = [](const Tensor& i, const Tensor& v) {
    return rune::switch_<Tensor>(i, {[&] { return nx::sqrt(v); }, [&] { return nx::log(v); }, [&] { return v * v; }});
  };
  auto loss3 = [&](const Tensor& v) { return nx::sum(rune::vmap(three)(indices, v)); };
  check_bits(rune::grad(loss3)(at), f64({3}, {0.25, 0.5, -6}));
  check_bits(rune::jit(rune::grad(loss3))(at), f64({3}, {0.25, 0.5, -6}));
  // nested maps, and a scan inside the branch
  auto scanned = [](const Tensor& v) {
    return rune::cond(nx::greater(v, 0.), [&] {
      return rune::scan([](const Tensor& c) { return std::pair{nx::sqrt(c), c}; }, v, 2).first;
    }, [&] { return v * 0.; });
  };
  const Tensor grid = f64({2, 2}, {16, -1, 0, 16});
  auto nested = [&](const Tensor& m) { return nx::sum(rune::vmap(rune::vmap(scanned))(m)); };
  const Tensor g = rune::grad(nested)(grid);
  check_close(g, f64({2, 2}, {1. / 32, 0, 0, 1. / 32}));
  check_bits(rune::jit(rune::grad(nested))(grid), g);
  // no lanes: no branch is taken, the results are empty
  const Tensor none = nx::zeros(nx::float64, {0});
  check_bits(rune::vmap(guarded_sqrt)(none), none);
  check_bits(rune::grad(of_sum)(none), none);
  check_bits(rune::jit(rune::vmap(guarded_sqrt))(none), none);
}

TEST_CASE("vmap with a per-lane pred: a lane's errors and effects in a branch it did not take do not exist "
          "(issue 25, 4)") {
  // A check in the branch only lane 0 takes.
  auto checked = [](const Tensor& x) {
    return rune::cond(nx::greater(x, 0.), [&] {
      nx::check(nx::greater(x, 0.), std::tuple<>{}, [](const nx::Index&, std::tuple<>) {
        return std::make_exception_ptr(std::invalid_argument("not positive"));
      });
      return nx::sqrt(x);
    }, [&] { return -x; });
  };
  const Tensor x = f64({2}, {4, -1});
  check_bits(rune::vmap(checked)(x), f64({2}, {2, 1}));
  check_bits(rune::jit(rune::vmap(checked))(x), f64({2}, {2, 1}));
  // Newton's square root guarded by x > 0: every lane alone succeeds.
  auto root = [](const Tensor& v) { return rune::cond(nx::greater(v, 0.), [&] { return newton(v, 50); }, [&] { return v * 0.; }); };
  const Tensor xs = f64({4}, {4, -1, 0, 9});
  const Tensor roots = rune::vmap(root)(xs);
  check_close(roots, f64({4}, {2, 0, 0, 3}));
  check_bits(roots, nx::stack({root(nx::get(xs, 0)), root(nx::get(xs, 1)), root(nx::get(xs, 2)), root(nx::get(xs, 3))}));
  check_bits(rune::jit(rune::vmap(root))(xs), roots);
  auto root_sum = [&](const Tensor& v) { return nx::sum(rune::vmap(root)(v)); };
  check_close(rune::grad(root_sum)(xs), f64({4}, {0.25, 0, 0, 1. / 6}));
  check_bits(rune::jit(rune::grad(root_sum))(xs), rune::grad(root_sum)(xs));
  // The error of a lane that takes the branch names that lane, not a lane
  // computing its values in its place.
  auto short_root = [](const Tensor& v) { return rune::cond(nx::greater(v, 0.), [&] { return newton(v, 3); }, [&] { return v; }); };
  CHECK_THROWS_WITH(rune::vmap(short_root)(f64({3}, {-1, 1, 1e6})),
                    "rune::iterate: until is still false after max = 3 steps, in lane 2");
  CHECK_THROWS_WITH(rune::jit(rune::vmap(short_root))(f64({3}, {-1, 1, 1e6})),
                    "rune::iterate: until is still false after max = 3 steps, in lane 2");
  // A callback in a branch runs for the lanes that take it, on their values.
  std::vector<double> seen;
  auto logged = [&](const Tensor& v) {
    return rune::cond(nx::greater(v, 0.), [&] {
      return rune::callback([&](const Tensor& e) { return seen.push_back(nx::item(e)), e; }, v, v);
    }, [&] { return -v; });
  };
  check_bits(rune::vmap(logged)(f64({3}, {-1, 2, 3})), f64({3}, {1, 2, 3}));
  CHECK(seen == std::vector<double>{2, 3});
  seen.clear();
  check_bits(rune::jit(rune::vmap(logged))(f64({3}, {-1, -2, 3})), f64({3}, {1, 2, 3}));
  CHECK(seen == std::vector<double>{3});
  // A branch that no lane takes is not computed.
  seen.clear();
  check_bits(rune::vmap(logged)(f64({2}, {-1, -2})), f64({2}, {1, 2}));
  CHECK(seen.empty());
}

TEST_CASE("vmap with a per-lane pred: rune::lanes inside a branch that some lane does not take throws") {
  rune::Axis a = rune::axis();
  auto f = [a](const Tensor& x) {
    return rune::cond(nx::greater(x, 0.), [&] { return nx::sum(rune::lanes(a, x)); }, [&] { return x; });
  };
  CHECK_THROWS_WITH(rune::vmap(f, a)(f64({2}, {1, -1})),
                    "rune::lanes: a lane of rune::cond that takes another branch computes nothing in this one, so a "
                    "branch cannot gather every lane; give every lane the same pred or index");
  check_bits(rune::vmap(f, a)(f64({2}, {1, 2})), f64({2}, {3, 3}));
}
