// Tracing and programs: rune::program, the staging trace's stand-ins,
// constants and captures, rune::scan (values, structures, errors), rune::run,
// saving and loading.
#include <filesystem>
#include <map>
#include <optional>

#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

namespace {
Tensor v4() { return f64({4}, {1, 2, 3, 4}); }

auto cumulative = [](const Tensor& v) {
  return rune::scan(
             [](const Tensor& acc, const Tensor& row) {
               Tensor next = acc + row * row;
               return std::pair{next, next};
             },
             nx::scalar(nx::float64, 0.), v)
      .second;
};
}  // namespace

TEST_CASE("the seed page's program text") {
  CHECK(rune::to_string(rune::program(cumulative, v4())) == test::api_example_text);
}

TEST_CASE("rune::program runs the function once over stand-ins and computes nothing") {
  int runs = 0;
  rune::Program p = rune::program(
      [&](const Tensor& x) {
        ++runs;
        CHECK(x.is_traced());
        CHECK(x.shape() == nx::Shape{4});
        return nx::sum(x * x);
      },
      v4());
  CHECK(runs == 1);
  CHECK(rune::run(p, {v4()})[0].dtype() == nx::float64);
  CHECK(nx::item(rune::run(p, {v4()})[0]) == 30);
}

TEST_CASE("reading a stand-in names the entry point that traced it") {
  CHECK_THROWS_WITH(rune::program([](const Tensor& x) { return x * nx::item(x, {0}); }, v4()),
                    "nx::item: the value is traced by rune::program");
  CHECK_THROWS_WITH(rune::program([](const Tensor& x) { return nx::to_vector<double>(x).size(); }, v4()),
                    "nx::to_vector: the value is traced by rune::program");
  CHECK_THROWS_WITH(rune::program([](const Tensor& x) { return nx::to_string(x).size(); }, v4()),
                    "nx::to_string: the value is traced by rune::program");
  CHECK_THROWS_WITH(
      rune::scan([](const Tensor& acc, const Tensor& row) {
        Tensor next = nx::item(row) > 2. ? acc : acc + row;
        return std::pair{next, next};
      },
                 nx::scalar(nx::float64, 0.), v4()),
      "nx::item: the value is traced by rune::scan");
}

TEST_CASE("a value used after its trace ended is an error, not a crash") {
  Tensor leaked;
  (void)rune::program([&](const Tensor& x) {
    leaked = x * 2.;
    return x;
  },
                      v4());
  CHECK_THROWS_WITH(leaked + 1., StartsWith("nx::add: a value traced by rune::program is used after its trace ended"));
  CHECK_THROWS_WITH(nx::item(leaked, {0}), "nx::item: the value is traced by rune::program");
}

TEST_CASE("captured tensors and doubles are read at the trace") {
  double scale = 2.;
  Tensor offset = f64({4}, {1, 1, 1, 1});
  rune::Program p = rune::program([&](const Tensor& x) { return x * scale + offset; }, v4());
  scale = 10.;
  offset = f64({4}, {0, 0, 0, 0});
  CHECK(values(rune::run(p, {v4()})[0]) == std::vector<double>{3, 5, 7, 9});
  CHECK(rune::to_string(p).find("constant [0x3ff0000000000000, 0x3ff0000000000000") != std::string::npos);
}

TEST_CASE("scan computes a running state and stacks its outputs") {
  auto [total, prefixes] = rune::scan(
      [](const Tensor& acc, const Tensor& row) {
        Tensor next = acc * row;
        return std::pair{next, next};
      },
      nx::scalar(nx::float64, 1.), v4());
  CHECK(text(total) == "float64 [] 24");
  CHECK(text(prefixes) == "float64 [4] [1, 2, 6, 24]");
  CHECK(text(cumulative(v4())) == "float64 [4] [1, 5, 14, 30]");
}

TEST_CASE("scan traces its step once, whatever the number of rows") {
  int runs = 0;
  (void)rune::scan(
      [&](const Tensor& acc, const Tensor& row) {
        ++runs;
        return std::pair{acc + row, acc};
      },
      nx::scalar(nx::float64, 0.), nx::ones(nx::float64, {100}));
  CHECK(runs == 1);
}

namespace {
struct State {
  Tensor position, velocity;
  int substeps = 2;
};
RUNE_TREE(State, position, velocity, substeps);
}  // namespace

TEST_CASE("scan carries and emits any structure; a step with nothing to emit returns an empty tuple") {
  std::map<std::string, Tensor> xs{{"force", f64({3, 2}, {1, 0, 0, 1, 1, 1})}, {"dt", f64({3}, {0.5, 0.5, 1})}};
  State init{nx::zeros(nx::float64, {2}), nx::zeros(nx::float64, {2}), 3};
  auto [final_state, trail] = rune::scan(
      [](const State& s, const std::map<std::string, Tensor>& row) {
        CHECK(s.substeps == 3);  // static leaves stay as they are
        Tensor v = s.velocity + row.at("force") * row.at("dt");
        State next{s.position + v * row.at("dt"), v, s.substeps};
        return std::pair{next, std::vector<Tensor>{next.position, nx::sum(v)}};
      },
      init, xs);
  CHECK(text(final_state.velocity) == "float64 [2] [1.5, 1.5]");
  CHECK(text(final_state.position) == "float64 [2] [2, 1.75]");
  CHECK(trail.size() == 2);
  CHECK(trail[0].shape() == nx::Shape{3, 2});
  CHECK(text(trail[1]) == "float64 [3] [0.5, 1, 3]");

  auto [count, none] = rune::scan(
      [](const Tensor& c, const std::optional<Tensor>& row) { return std::pair{c + *row, std::tuple<>{}}; },
      nx::scalar(nx::int32, 0), std::optional<Tensor>(nx::create(nx::int32, {3}, {1, 2, 3})));
  CHECK(text(count) == "int32 [] 6");
  (void)none;
}

TEST_CASE("a step reads values it captures: concrete ones as constants, traced ones as captures") {
  Tensor w = f64({2}, {2, 3});
  auto [total, rows] = rune::scan([&](const Tensor& c, const Tensor& row) { return std::pair{c + row * w, nx::sum(row)}; },
                                  nx::zeros(nx::float64, {2}), nx::ones(nx::float64, {3, 2}));
  CHECK(text(total) == "float64 [2] [6, 9]");
  rune::Program p = rune::program(
      [](const Tensor& xs, const Tensor& w2) {
        return rune::scan([&](const Tensor& c, const Tensor& row) { return std::pair{c + row * w2, std::tuple<>{}}; },
                          nx::zeros(nx::float64, {2}), xs)
            .first;
      },
      nx::ones(nx::float64, {3, 2}), w);
  CHECK(rune::to_string(p).find("xs (%0), captures (%1)") != std::string::npos);
  CHECK(text(rune::run(p, {nx::ones(nx::float64, {3, 2}), w})[0]) == "float64 [2] [6, 9]");
}

TEST_CASE("a step that captures a value after making others prints and parses back to an equal program") {
  auto f = [](const Tensor& xs, const Tensor& scale) {
    auto step = [&](const Tensor& acc, const Tensor& row) {
      Tensor twice = row * 2.;      // values of the step made before the capture is read
      Tensor next = acc + twice * scale;
      return std::pair{next, next};
    };
    return rune::scan(step, nx::scalar(nx::float64, 0.), xs).second;
  };
  rune::Program p = rune::program(f, v4(), nx::scalar(nx::float64, 3.));
  CHECK(rune::parse_program(rune::to_string(p)) == p);
  CHECK(values(rune::run(p, {v4(), nx::scalar(nx::float64, 3.)})[0]) == std::vector<double>{6, 18, 36, 60});
}

TEST_CASE("a pad filled with NaN prints and parses back to an equal program") {
  auto f = [](const Tensor& x) { return nx::pad(x, {{1, 1}}, std::nan("")); };
  rune::Program p = rune::program(f, v4());
  CHECK(p == p);
  CHECK(rune::parse_program(rune::to_string(p)) == p);
}

TEST_CASE("scan's errors") {
  auto step = [](const Tensor& c, const Tensor& row) { return std::pair{c + row, c}; };
  Tensor zero = nx::scalar(nx::float64, 0);
  CHECK_THROWS_WITH(rune::scan([](const Tensor& c, const std::vector<Tensor>&) { return std::pair{c, c}; }, zero,
                               std::vector<Tensor>{}),
                    "rune::scan: xs has no leaf");
  CHECK_THROWS_WITH(rune::scan(step, zero, zero), "rune::scan: an xs leaf is a scalar");
  CHECK_THROWS_WITH(
      rune::scan([](const Tensor& c, const std::pair<Tensor, Tensor>& r) { return std::pair{c + r.first, c}; }, zero,
                 std::pair{nx::ones(nx::float64, {3}), nx::ones(nx::float64, {2})}),
      "rune::scan: the xs leaves differ in their leading length");
  CHECK_THROWS_WITH(rune::scan(step, zero, nx::ones(nx::float64, {0})), "rune::scan: xs is empty along the scan axis");
  CHECK_THROWS_WITH(rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{c + row, c}; }, zero,
                               nx::ones(nx::float64, {2, 3})),
                    "rune::scan: the root: shape [3] in the carry the step returned, [] in the carry it received");
  CHECK_THROWS_WITH(
      rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{nx::cast(c + row, nx::float32), c}; }, zero,
                 nx::ones(nx::float64, {2})),
      "rune::scan: the root: dtype float32 in the carry the step returned, float64 in the carry it received");
  CHECK_THROWS_WITH(rune::scan(
                        [](const std::vector<Tensor>& c, const Tensor& row) {
                          std::vector<Tensor> next = c;
                          next.push_back(row);
                          return std::pair{next, row};
                        },
                        std::vector<Tensor>{zero, zero}, nx::ones(nx::float64, {2})),
                    "rune::scan: the root: length 3 in the carry the step returned, length 2 in the carry it received");
  CHECK_THROWS_WITH(rune::scan(
                        [](const std::pair<Tensor, std::optional<Tensor>>& c, const Tensor& row) {
                          return std::pair{std::pair{c.first + row, std::optional<Tensor>()}, row};
                        },
                        std::pair{zero, std::optional<Tensor>(zero)}, nx::ones(nx::float64, {2})),
                    "rune::scan: 1: None in the carry the step returned, Some in the carry it received");
  // after an error, tracing works again (the trace was popped)
  CHECK(text(cumulative(v4())) == "float64 [4] [1, 5, 14, 30]");
}

TEST_CASE("run checks its arguments") {
  rune::Program p = rune::program([](const Tensor& a, const Tensor& b) { return a * b; }, v4(), v4());
  CHECK_THROWS_WITH(rune::run(p, {v4()}), "rune::run: the program takes 2 arguments, got 1");
  CHECK_THROWS_WITH(rune::run(p, {v4(), nx::ones(nx::float32, {4})}),
                    "rune::run: argument 1 is float32 [4], the program takes float64 [4]");
  CHECK_THROWS_WITH(rune::run(p, {v4(), nx::ones(nx::float64, {3})}),
                    "rune::run: argument 1 is float64 [3], the program takes float64 [4]");
  CHECK_THROWS_WITH(rune::run(p, {v4(), Tensor()}), "rune::run: argument 1 holds no value (it was default-constructed)");
  CHECK_THROWS_WITH(rune::run(rune::Program(), {}), StartsWith("rune::Program: "));
}

TEST_CASE("programs are saved, loaded and run without the C++ that traced them") {
  rune::Program p = rune::program(cumulative, v4());
  auto file = std::filesystem::temp_directory_path() / "rune_test_program.txt";
  rune::save_program(p, file);
  rune::Program q = rune::load_program(file);
  std::filesystem::remove(file);
  CHECK(q == p);
  CHECK(text(rune::run(q, {f64({4}, {2, 2, 2, 2})})[0]) == "float64 [4] [4, 8, 12, 16]");
  CHECK_THROWS_WITH(rune::load_program("/nonexistent/program.txt"),
                    "rune::load_program: cannot read /nonexistent/program.txt: No such file or directory");
}
