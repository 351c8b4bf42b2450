// rune::vmap: every primitive of the table mapped equals the loop over its
// lanes stacked (enrolled from the table's samples), and maps compose with
// grad, jit, scan, callbacks and each other.
#include <functional>

#include <rune/rune.hpp>

#include "helpers.hpp"
#include "primitive_cases.hpp"

using test::f64;

namespace {
constexpr std::int64_t lanes = 3;

// Lane i's value of an operand: floats scaled (positive factors keep the
// samples in their domains), others as they are.
Tensor lane_value(const Tensor& t, std::int64_t i) {
  return nx::is_floating(t.dtype()) ? t * (1. + 0.25 * double(i)) : t;
}

void check_close(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  std::vector<double> a = nx::to_vector<double>(got), b = nx::to_vector<double>(want);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": " << a[i] << " against " << b[i]);
    CHECK((a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])) || std::fabs(a[i] - b[i]) <= 1e-12 * std::max(1., std::fabs(b[i]))));
  }
}

// Maps the sample over the operands in `mapped` (the others are captured,
// the same in every lane) and compares with the loop over the lanes.
void check_mapped(const test::Case& c, const std::vector<std::size_t>& mapped) {
  std::vector<Tensor> rows, inputs;
  for (std::int64_t i = 0; i < lanes; ++i) {
    std::vector<Tensor> ops = c.operands;
    for (std::size_t k : mapped) ops[k] = lane_value(c.operands[k], i);
    rows.push_back(bind(c.prim, ops, c.params));
  }
  for (std::size_t k : mapped) {
    std::vector<Tensor> column;
    for (std::int64_t i = 0; i < lanes; ++i) column.push_back(lane_value(c.operands[k], i));
    inputs.push_back(nx::stack(column));
  }
  auto f = [&](const std::vector<Tensor>& xs) {
    std::vector<Tensor> ops = c.operands;
    for (std::size_t j = 0; j < mapped.size(); ++j) ops[mapped[j]] = xs[j];
    return bind(c.prim, ops, c.params);
  };
  check_close(rune::vmap(f)(inputs), nx::stack(rows));
}
}  // namespace

TEST_CASE("every primitive mapped equals the loop over its lanes stacked") {
  for (const test::Case& c : test::samples()) {
    INFO(info(c.prim).name);
    REQUIRE(rules(c.prim).batch != nullptr);
    std::vector<std::size_t> all;
    for (std::size_t k = 0; k < c.operands.size(); ++k) all.push_back(k);
    check_mapped(c, all);
    if (c.operands.size() > 1)
      for (std::size_t k = 0; k < c.operands.size(); ++k) {
        INFO("only operand " << k << " mapped");
        check_mapped(c, {k});
      }
  }
}

TEST_CASE("vmap maps axis 0 of every leaf; captures and unmapped results are the same in every lane") {
  Tensor x = f64({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor w = f64({2, 2}, {1, 0, 0, 2});
  auto rows = rune::vmap([&](const Tensor& r) { return nx::matmul(nx::reshape(r, {1, 2}), w); })(x);
  CHECK(test::text(rows) == "float64 [3, 1, 2] [[[1, 4]], [[3, 8]], [[5, 12]]]");
  auto sums = rune::vmap([](const std::pair<Tensor, Tensor>& p, int scale) { return nx::sum(p.first) * double(scale) + p.second; });
  CHECK(test::text(sums(std::pair{x, f64({3}, {10, 20, 30})}, 2)) == "float64 [3] [16, 34, 52]");
  auto constant = rune::vmap([](const Tensor&) { return nx::scalar(nx::float64, 7); });
  CHECK(test::text(constant(x)) == "float64 [3] [7, 7, 7]");
}

TEST_CASE("vmap's errors") {
  Tensor x = nx::zeros(nx::float64, {3, 2});
  auto add = rune::vmap([](const Tensor& a, const Tensor& b) { return a + b; });
  CHECK_THROWS_WITH(add(x, nx::zeros(nx::float64, {2})), "rune::vmap: 1: 2 rows along axis 0, 0: 3");
  CHECK_THROWS_WITH(add(x, nx::scalar(nx::float64, 1)), "rune::vmap: 1: a scalar has no axis 0 to map over");
  auto read = rune::vmap([](const Tensor& r) { return nx::scalar(nx::float64, nx::item(r, {0})); });
  CHECK_THROWS_WITH(read(x), "nx::item: the value is traced by rune::vmap");
  auto mismatched = rune::vmap([](const Tensor& r) { return r + nx::zeros(nx::float64, {3}); });
  CHECK_THROWS_WITH(mismatched(x), test::Placed("nx::add: shapes [2] and [3] do not broadcast"));
}

TEST_CASE("vmap composes with grad, jit and itself") {
  Tensor x = f64({3, 2}, {0.5, 1, 1.5, 2, 2.5, 3});
  auto loss = [](const Tensor& r) { return nx::sum(nx::sin(r) * r); };
  Tensor per_row = rune::vmap(rune::grad(loss))(x);
  CHECK(test::values(per_row) == test::values(rune::grad(loss, x)));  // rows are independent
  Tensor of_map = rune::grad([&](const Tensor& m) { return nx::sum(rune::vmap(loss)(m)); }, x);
  CHECK(test::values(of_map) == test::values(per_row));
  auto twice = [](const Tensor& e) { return nx::exp(e) * 2.; };
  Tensor eager = twice(x);
  CHECK(test::values(rune::jit(rune::vmap(twice))(x)) == test::values(eager));
  CHECK(test::values(rune::vmap(rune::jit(twice))(x)) == test::values(eager));
  CHECK(test::values(rune::vmap(rune::vmap(twice))(x)) == test::values(eager));
  auto outer = rune::vmap([&](const Tensor& r) { return rune::vmap([&](const Tensor& e) { return e * nx::sum(r); })(r); });
  CHECK(test::text(outer(x)) == "float64 [3, 2] [[0.75, 1.5], [5.25, 7], [13.75, 16.5]]");
}

TEST_CASE("constructs under vmap run lane by lane: scan, callbacks once per lane") {
  Tensor xs = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto cumulative = [](const Tensor& row) {
    return rune::scan([](const Tensor& c, const Tensor& x) { return std::pair{c + x, c + x}; },
                      nx::scalar(nx::float64, 0), row)
        .second;
  };
  CHECK(test::text(rune::vmap(cumulative)(xs)) == "float64 [2, 3] [[1, 3, 6], [4, 9, 15]]");
  std::vector<double> seen;
  auto noted = rune::vmap([&](const Tensor& r) {
    return rune::callback(
        [&](const Tensor& v) {
          seen.push_back(nx::item(nx::sum(v)));
          return v;
        },
        r, r);
  });
  CHECK(test::values(noted(xs)) == test::values(xs));
  CHECK(seen == std::vector<double>{6, 15});
}

TEST_CASE("a scan under vmap is one scan; only what is batched is batched") {
  Tensor xs = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  // The carry starts the same in every lane and becomes batched: the step is batched once.
  auto cumulative = [](const Tensor& row) {
    auto step = [](const Tensor& c, const Tensor& x) { return std::pair{c + x, c * 2.}; };
    return rune::scan(step, nx::scalar(nx::float64, 0), row);
  };
  auto [last, doubled] = rune::vmap(cumulative)(xs);
  CHECK(test::text(last) == "float64 [2] [6, 15]");
  CHECK(test::text(doubled) == "float64 [2, 3] [[0, 2, 6], [0, 8, 18]]");
  rune::Program p = rune::program(rune::vmap(cumulative), xs);
  const std::string text = rune::to_string(p);
  CHECK(text.find("float64 [2] at CPU, %") != std::string::npos);  // a carry of every lane
  CHECK(std::count(text.begin(), text.end(), '\n') < 20);             // one scan, not one per lane
  // A counter the lanes share stays unbatched; the batched capture scales the rows.
  auto counted = [](const Tensor& scale) {
    auto step = [&](const Tensor& n, const Tensor& x) { return std::pair{n + 1., x * scale}; };
    return rune::scan(step, nx::scalar(nx::float64, 0), nx::ones(nx::float64, {3}));
  };
  auto [counts, scaled] = rune::vmap(counted)(f64({2}, {2, 3}));
  CHECK(test::text(counts) == "float64 [2] [3, 3]");
  CHECK(test::text(scaled) == "float64 [2, 3] [[2, 2, 2], [3, 3, 3]]");
}

TEST_CASE("scans under vmap differentiate and compile") {
  Tensor xs = f64({2, 3}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
  auto loss = [](const Tensor& row) {
    auto step = [](const Tensor& c, const Tensor& x) { return std::pair{nx::sin(c) + x * c, c}; };
    return nx::sum(rune::scan(step, nx::scalar(nx::float64, 1), row).second);
  };
  Tensor per_row = rune::vmap(rune::grad(loss))(xs);
  Tensor rows = nx::stack({rune::grad(loss, nx::get(xs, 0)), rune::grad(loss, nx::get(xs, 1))});
  check_close(per_row, rows);
  check_close(rune::grad([&](const Tensor& m) { return nx::sum(rune::vmap(loss)(m)); }, xs), rows);
  check_close(rune::jit(rune::vmap(rune::grad(loss)))(xs), rows);
}

TEST_CASE("named maps: lanes, lane_index and lane_count") {
  Tensor x = f64({3, 2}, {1, 2, 3, 4, 5, 6});
  rune::Axis rows = rune::axis(), cols = rune::axis();
  CHECK(rune::lane_count() == 1);
  CHECK(test::text(rune::lane_index()) == "int32 [] 0");
  auto centered = rune::vmap([&](const Tensor& r) { return r - nx::mean(rune::lanes(rows, r), {0}); }, rows);
  CHECK(test::text(centered(x)) == "float64 [3, 2] [[-2, -2], [0, 0], [2, 2]]");
  CHECK(test::text(rune::jit(centered)(x)) == "float64 [3, 2] [[-2, -2], [0, 0], [2, 2]]");
  auto indexed = rune::vmap([&](const Tensor& r) {
    CHECK(rune::lane_count() == 3);
    return r * 0. + nx::cast(rune::lane_index(), nx::float64);
  });
  CHECK(test::text(indexed(x)) == "float64 [3, 2] [[0, 0], [1, 1], [2, 2]]");
  // Inside a map over the elements of a row, gather along the rows and the columns.
  auto nested = rune::vmap(
      [&](const Tensor& r) {
        return rune::vmap(
            [&](const Tensor& e) {
              CHECK(rune::lane_count(rows) == 3);
              CHECK(rune::lane_count(cols) == 2);
              return nx::sum(rune::lanes(rows, e)) * 10. + nx::sum(rune::lanes(cols, e)) +
                     nx::cast(rune::lane_index(rows), nx::float64) * 1000.;
            },
            cols)(r);
      },
      rows);
  CHECK(test::text(nested(x)) == "float64 [3, 2] [[93, 123], [1097, 1127], [2101, 2131]]");
  CHECK_THROWS_WITH(rune::lanes(rows, x),
                    test::Placed("rune::lanes: no map of this axis is running (name one with rune::vmap(f, axis))"));
}

TEST_CASE("take with per-lane indices into per-lane operands is one gather") {
  Tensor x = nx::reshape(nx::arange(nx::float64, 0, 3 * 2 * 4 * 2), {3, 2, 4, 2});  // lanes of [2, 4, 2]
  Tensor idx = nx::create(nx::int32, {3, 2, 2}, {0, 3, -1, 9, 1, 1, 2, 0, -4, 3, 2, 1});
  auto gather = [](const Tensor& a, const Tensor& i) { return nx::take(a, i, 1); };
  std::vector<Tensor> rows;
  for (std::int64_t l = 0; l < 3; ++l) rows.push_back(gather(nx::get(x, l), nx::get(idx, l)));
  check_close(rune::vmap(gather)(x, idx), nx::stack(rows));
  const std::string text = rune::to_string(rune::program(rune::vmap(gather), x, idx));
  CHECK(text.find("take(") == text.rfind("take("));  // one gather, not one per lane
}

TEST_CASE("scatter_add with per-lane indices is one scatter") {
  Tensor x = nx::reshape(nx::arange(nx::float64, 0, 3 * 2 * 4), {3, 2, 4});  // lanes of [2, 4]
  Tensor idx = nx::create(nx::int32, {3, 3}, {0, 3, 3, -1, 9, 1, 2, 2, 2});
  Tensor updates = nx::ones(nx::float64, {3, 2, 3}) * 10.;
  auto scatter = [](const Tensor& a, const Tensor& i, const Tensor& u) { return nx::scatter_add(a, i, u, 1); };
  std::vector<Tensor> rows;
  for (std::int64_t l = 0; l < 3; ++l) rows.push_back(scatter(nx::get(x, l), nx::get(idx, l), nx::get(updates, l)));
  check_close(rune::vmap(scatter)(x, idx, updates), nx::stack(rows));
  const std::string text = rune::to_string(rune::program(rune::vmap(scatter), x, idx, updates));
  CHECK(text.find("scatter_add(") == text.rfind("scatter_add("));  // one scatter, not one per lane
}

TEST_CASE("dynamic_slice with per-lane starts gathers its window axis by axis") {
  Tensor x = nx::reshape(nx::arange(nx::float64, 0, 3 * 4 * 5), {3, 4, 5});  // lanes of [4, 5]
  Tensor starts = nx::create(nx::int32, {3, 2}, {0, 0, 3, 4, -2, 1});      // clamped: (2, 2), (0, 1)
  auto window = [](const Tensor& a, const Tensor& s) { return nx::dynamic_slice(a, s, {2, 3}); };
  std::vector<Tensor> rows;
  for (std::int64_t l = 0; l < 3; ++l) rows.push_back(window(nx::get(x, l), nx::get(starts, l)));
  check_close(rune::vmap(window)(x, starts), nx::stack(rows));
  check_close(rune::vmap([&](const Tensor& s) { return window(nx::get(x, 0), s); })(starts),
              nx::stack({window(nx::get(x, 0), nx::get(starts, 0)), window(nx::get(x, 0), nx::get(starts, 1)),
                         window(nx::get(x, 0), nx::get(starts, 2))}));
  const std::string text = rune::to_string(rune::program(rune::vmap(window), x, starts));
  CHECK(text.find("dynamic_slice(") == std::string::npos);  // gathers, not one slice per lane
}

TEST_CASE("custom rules under vmap keep their rules") {
  // The pullback says 30 v^2 (ten times the true derivative), so the rule is seen to apply.
  auto cube = rune::custom_vjp([](const Tensor& v) {
    return std::pair{v * v * v, [v](const Tensor& ct) { return ct * v * v * 30.; }};
  });
  auto square = rune::custom_jvp([](const Tensor& v) {
    return std::pair{v * v, [v](const Tensor& t) { return t * v * 20.; }};
  });
  Tensor xs = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto loss = [&](const Tensor& r) { return nx::sum(cube(r)); };
  CHECK(test::text(rune::vmap(cube)(xs)) == "float64 [2, 3] [[1, 8, 27], [64, 125, 216]]");
  const std::string rule = "float64 [2, 3] [[30, 120, 270], [480, 750, 1080]]";
  CHECK(test::text(rune::vmap(rune::grad(loss))(xs)) == rule);
  CHECK(test::text(rune::grad([&](const Tensor& m) { return nx::sum(rune::vmap(loss)(m)); }, xs)) == rule);
  CHECK(test::text(rune::jit(rune::vmap(rune::grad(loss)))(xs)) == rule);
  CHECK(test::text(rune::vmap(rune::grad([&](const Tensor& r) { return nx::sum(square(r)); }))(xs)) ==
        "float64 [2, 3] [[20, 40, 60], [80, 100, 120]]");
}

TEST_CASE("dynamic_update_slice with per-lane starts places each window exactly") {
  Tensor x = nx::reshape(nx::arange(nx::float64, 0, 3 * 4 * 5), {3, 4, 5}) * -1.;
  Tensor updates = nx::reshape(nx::arange(nx::float64, 0, 3 * 2 * 3), {3, 2, 3}) + 0.5;
  Tensor starts = nx::create(nx::int32, {3, 2}, {0, 0, 3, 4, -2, 1});
  auto place = [](const Tensor& a, const Tensor& u, const Tensor& s) { return nx::dynamic_update_slice(a, u, s); };
  std::vector<Tensor> rows;
  for (std::int64_t l = 0; l < 3; ++l) rows.push_back(place(nx::get(x, l), nx::get(updates, l), nx::get(starts, l)));
  CHECK(test::text(rune::vmap(place)(x, updates, starts)) == test::text(nx::stack(rows)));
  Tensor flags = nx::create(nx::bool_, {3, 1}, {1, 1, 1});
  auto mark = [](const Tensor& s, const Tensor& f) { return nx::dynamic_update_slice(nx::zeros(nx::bool_, {4}), f, s); };
  CHECK(test::text(rune::vmap(mark)(nx::create(nx::int32, {3, 1}, {0, 2, 9}), flags)) ==
        "bool [3, 4] [[true, false, false, false], [false, false, true, false], [false, false, false, true]]");
  const std::string text = rune::to_string(rune::program(rune::vmap(place), x, updates, starts));
  CHECK(text.find("dynamic_update_slice(") == std::string::npos);  // one select, not one update per lane
}

TEST_CASE("rune::lanes is a collective: recorded in sub-programs, differentiated and compiled inside the map") {
  rune::Axis rows = rune::axis();
  const Tensor x = f64({3, 2}, {1, 2, 3, 4, 5, 6});
  // The mean over the lanes, subtracted: computed inside grad and jit within the map.
  auto centered = [rows](const Tensor& r) { return r - nx::mean(rune::lanes(rows, r), {0}); };
  const Tensor plain = rune::vmap(centered, rows)(x);
  CHECK(test::text(plain) == "float64 [3, 2] [[-2, -2], [0, 0], [2, 2]]");
  CHECK(test::text(rune::vmap(rune::jit(centered), rows)(x)) == test::text(plain));
  // In a scan's step: every lane's carry gathered on each row.
  auto running = [rows](const Tensor& r) {
    return rune::scan([rows](const Tensor& c, const Tensor& e) {
      Tensor next = c + nx::sum(rune::lanes(rows, e));
      return std::pair{next, next};
    }, nx::scalar(nx::float64, 0.), r).first;
  };
  CHECK(test::text(rune::vmap(running, rows)(x)) == "float64 [3] [21, 21, 21]");
  // Derivatives through the gather (its transpose sums over the lanes):
  // d/dx_ij of sum_i (x_i - mean(x))^2 = 2 (x_ij - mean_j).
  auto spread = [rows](const Tensor& r) {
    Tensor d = r - nx::mean(rune::lanes(rows, r), {0});
    return nx::sum(d * d);
  };
  const Tensor per_lane = rune::vmap(rune::grad(spread), rows)(x);
  CHECK(test::text(per_lane) == "float64 [3, 2] [[-4, -4], [0, 0], [4, 4]]");
  const Tensor whole = rune::grad([&](const Tensor& m) { return nx::sum(rune::vmap(spread, rows)(m)); }, x);
  CHECK(test::text(whole) == "float64 [3, 2] [[-4, -4], [0, 0], [4, 4]]");
  // A program holding the collective runs only inside its map.
  const rune::Program p = rune::program([&](const Tensor& m) { return rune::vmap(rune::jit(centered), rows)(m); }, x);
  CHECK(test::text(rune::run(p, {x})[0]) == test::text(plain));
}

namespace {
// Functions of one lane whose "no axes given" default means every axis of
// the lane: under a map they must not reach the lane axis.
struct LaneFunction {
  const char* name;
  std::function<Tensor(const Tensor&)> f;
};

std::vector<LaneFunction> every_axis_functions() {
  return {{"sum", [](const Tensor& r) { return nx::sum(r); }},
          {"mean", [](const Tensor& r) { return nx::mean(r); }},
          {"prod", [](const Tensor& r) { return nx::prod(r); }},
          {"max", [](const Tensor& r) { return nx::max(r); }},
          {"min", [](const Tensor& r) { return nx::min(r); }},
          {"logsumexp", [](const Tensor& r) { return nx::logsumexp(r); }},
          {"sum keepdims", [](const Tensor& r) { return nx::sum(r, {}, true); }},
          {"flip", [](const Tensor& r) { return nx::flip(r, {}); }},
          {"transpose", [](const Tensor& r) { return nx::transpose(r); }},
          {"squeeze", [](const Tensor& r) { return nx::squeeze(r); }}};
}

// Each lane's value of `shape` (distinct values, so that mixed lanes show).
Tensor lanes_of(const nx::Shape& lane) {
  nx::Shape shape = lane;
  shape.insert(shape.begin(), lanes);
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return nx::reshape(nx::arange(nx::float64, 1, 1 + double(n)) * 0.5, shape);
}

Tensor lane_by_lane(const std::function<Tensor(std::int64_t)>& lane) {
  std::vector<Tensor> rows;
  for (std::int64_t i = 0; i < lanes; ++i) rows.push_back(lane(i));
  return nx::stack(rows);
}

// The map of f, its gradient, its jvp and their compiled forms against f lane by lane.
void check_every_axis_function(const LaneFunction& fn, const nx::Shape& lane) {
  INFO(fn.name << " of lanes of shape " << nx::to_string(lane));
  const Tensor x = lanes_of(lane), t = nx::cos(x);
  const Tensor mapped = rune::vmap(fn.f)(x);
  check_close(mapped, lane_by_lane([&](std::int64_t i) { return fn.f(nx::get(x, i)); }));
  CHECK(test::same_bits(rune::jit(rune::vmap(fn.f))(x), mapped));
  const Tensor w = lanes_of(nx::Shape(mapped.shape().begin() + 1, mapped.shape().end())) * 3.;
  auto weighted = [&](const Tensor& v) { return nx::sum(rune::vmap(fn.f)(v) * w); };
  const Tensor g = rune::grad(weighted, x);
  check_close(g, lane_by_lane([&](std::int64_t i) {
    return rune::grad([&](const Tensor& r) { return nx::sum(fn.f(r) * nx::get(w, i)); }, nx::get(x, i));
  }));
  CHECK(test::same_bits(rune::jit(rune::grad(weighted))(x), g));
  const auto [y, dy] = rune::jvp(rune::vmap(fn.f), x, t);
  check_close(y, mapped);
  check_close(dy, lane_by_lane([&](std::int64_t i) { return rune::jvp(fn.f, nx::get(x, i), nx::get(t, i)).second; }));
  auto tangent = [&](const Tensor& v) { return rune::jvp(rune::vmap(fn.f), v, t).second; };
  CHECK(test::same_bits(rune::jit(tangent)(x), dy));
}
}  // namespace

TEST_CASE("reductions, flip, transpose and squeeze of every axis of a lane keep to the lane, with derivatives") {
  for (const LaneFunction& fn : every_axis_functions())
    for (const nx::Shape& lane : {nx::Shape{}, nx::Shape{1}, nx::Shape{2}, nx::Shape{2, 1}})
      check_every_axis_function(fn, lane);
  // all, any and argmax/argmin (values; their derivatives are zero)
  const Tensor b = nx::create(nx::bool_, {3}, {1, 0, 1}), b2 = nx::create(nx::bool_, {3, 2}, {1, 0, 1, 1, 0, 0});
  CHECK(test::text(rune::vmap([](const Tensor& r) { return nx::all(r); })(b)) == "bool [3] [true, false, true]");
  CHECK(test::text(rune::vmap([](const Tensor& r) { return nx::any(r); })(b2)) == "bool [3] [true, true, false]");
  CHECK(test::text(rune::vmap([](const Tensor& r) { return nx::all(r); })(b2)) == "bool [3] [false, true, false]");
  const Tensor m = f64({3, 2}, {1, 2, 4, 3, 5, 5});
  auto arg = [](const Tensor& r) { return nx::cast(nx::argmax(r, 0) - nx::argmin(r, -1), nx::float64) + nx::sum(r); };
  CHECK(test::text(rune::vmap(arg)(m)) == "float64 [3] [4, 6, 10]");
  CHECK(test::text(rune::grad([&](const Tensor& v) { return nx::sum(rune::vmap(arg)(v)); }, m)) ==
        "float64 [3, 2] [[1, 1], [1, 1], [1, 1]]");
}

TEST_CASE("grad and jvp through a map of 0-d lanes: the issue's reproducers") {
  const Tensor v = f64({3}, {1, 4, 9}), w = f64({3}, {1, 2, 3}), ones = nx::ones(nx::float64, {3});
  auto through = [&](auto lane) {
    return rune::grad([&](const Tensor& x) { return nx::sum(rune::vmap(lane)(x) * w); }, v);
  };
  CHECK(test::text(through([](const Tensor& r) { return nx::mean(r); })) == "float64 [3] [1, 2, 3]");
  CHECK(test::text(through([](const Tensor& r) { return nx::flip(r, {}); })) == "float64 [3] [1, 2, 3]");
  auto summed = rune::vmap([](const Tensor& r) { return nx::sum(r); });
  CHECK(test::text(rune::jvp(summed, v, ones).second) == "float64 [3] [1, 1, 1]");
  CHECK(test::text(rune::jacfwd(summed, v)) == "float64 [3, 3] [[1, 0, 0], [0, 1, 0], [0, 0, 1]]");
  CHECK(test::text(rune::grad([](const Tensor& x) {
          return nx::sum(rune::vmap([](const Tensor& r) { return nx::max(r); })(x));
        }, v)) == "float64 [3] [1, 1, 1]");
  // Second order, and maps nested (each inner lane 0-d): sum(w x^3) has the Hessian diag(6 w x).
  auto cubes = rune::vmap([](const Tensor& r) { return nx::max(r) * nx::prod(r) * nx::mean(r); });
  CHECK(test::text(rune::hessian([&](const Tensor& x) { return nx::sum(cubes(x) * w); }, v)) ==
        "float64 [3, 3] [[6, 0, 0], [0, 48, 0], [0, 0, 162]]");
  const Tensor m = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto squares = rune::vmap(rune::vmap([](const Tensor& r) { return nx::sum(r * r); }));
  auto nested = [&](const Tensor& x) { return nx::sum(squares(x)); };
  CHECK(test::text(rune::grad(nested, m)) == "float64 [2, 3] [[2, 4, 6], [8, 10, 12]]");
  // Newton's square root of each lane (from one step past 1): d sqrt(a)/da = 1 / (2 sqrt(a)).
  auto newton = [](const Tensor& a) {
    return rune::iterate(50, [&](const Tensor& s) { return nx::less_equal(nx::abs(s * s - a), a * 1e-15); },
                         [&](const Tensor& s) { return (s + a / s) * 0.5; }, (a + 1.) * 0.5);
  };
  const Tensor g = rune::grad([&](const Tensor& x) { return nx::sum(rune::vmap(newton)(x)); }, v);
  CHECK(test::same_bits(g, rune::vmap(rune::grad(newton))(v)));
  const std::vector<double> want{0.5, 0.25, 1. / 6};
  for (std::size_t i = 0; i < 3; ++i) CHECK(test::values(g)[i] == Approx(want[i]).epsilon(1e-12));
}
