// Hostile input: shapes and parameters at and past the limits of a value,
// malformed program texts, misuse of compiled functions. Each case answers
// with its documented error (std::invalid_argument naming the entry point)
// or its right value; none crashes.
#include <barrier>
#include <climits>
#include <thread>

#include <rune/rune.hpp>

#include "helpers.hpp"
#include "ops/primitive.hpp"

using nx::float64;
using test::f64;

namespace {
constexpr std::int64_t big = std::int64_t(1) << 32;  // big * big elements: past 2^48
const std::string too_many = "holds more than 2^48 elements (the most one value may hold)";
nx::Tensor one() { return nx::scalar(float64, 1); }
}  // namespace

TEST_CASE("element counts past the limit are refused, never wrapped") {
  CHECK_THROWS_WITH(nx::zeros(float64, {std::int64_t(1) << 61}), "nx::zeros: shape [2305843009213693952] " + too_many);
  CHECK_THROWS_WITH(nx::zeros(float64, {big, big}), "nx::zeros: shape [4294967296, 4294967296] " + too_many);
  CHECK_THROWS_WITH(nx::zeros(nx::uint8, {INT64_MAX}), "nx::zeros: shape [9223372036854775807] " + too_many);
  CHECK_THROWS_WITH(nx::eye(float64, big), "nx::eye: shape [4294967296, 4294967296] " + too_many);
  CHECK_THROWS_WITH(nx::create(float64, {big, big}, {}), "nx::create: shape [4294967296, 4294967296] " + too_many);
  CHECK_THROWS_WITH(nx::exp(nx::broadcast_to(one(), {big, big})),
                    test::Placed("nx::broadcast_to: shape [4294967296, 4294967296] " + too_many));
  // Each operand is a view of one element; their broadcast is too large.
  nx::Tensor rows = nx::broadcast_to(one(), {std::int64_t(1) << 30, 1});
  nx::Tensor cols = nx::broadcast_to(one(), {1, std::int64_t(1) << 30});
  CHECK_THROWS_WITH(rows + cols, test::Placed("nx::add: shape [1073741824, 1073741824] " + too_many));
  nx::Tensor half = nx::broadcast_to(one(), {std::int64_t(1) << 47});
  CHECK_THROWS_WITH(nx::concatenate({half, half, half}, 0),
                    test::Placed("nx::concatenate: the result's axis 0 would be longer than 2^48 elements"));
  // A zero length empties the value, but the other lengths still bound its strides.
  CHECK_THROWS_WITH(nx::zeros(float64, {big, big, 0}),
                    "nx::zeros: shape [4294967296, 4294967296, 0] is too large: its nonzero lengths multiply to "
                    "more than 2^48");
  CHECK(nx::zeros(float64, {big, 0}).numel() == 0);
}

TEST_CASE("negative lengths are refused") {
  CHECK_THROWS_WITH(nx::broadcast_to(one(), {-5}), test::Placed("nx::broadcast_to: shape [-5] has a negative length"));
  CHECK_THROWS_WITH(nx::zeros(float64, {2, -1}), "nx::zeros: shape [2, -1] has a negative length");
  CHECK_THROWS_WITH(nx::reshape(nx::zeros(float64, {0}), {std::int64_t(1) << 62, 4}),
                    test::Placed("nx::reshape: cannot reshape float64 [0] (0 elements) into [4611686018427387904, 4]"));
  CHECK_THROWS_WITH(nx::reshape(nx::zeros(float64, {0}), {-1, INT64_MAX, 2}),
                    test::Placed("nx::reshape: cannot reshape float64 [0] (0 elements) into [-1, 9223372036854775807, 2]"));
  CHECK_THROWS_WITH(nx::dynamic_slice(nx::zeros(float64, {3}), nx::zeros(nx::int32, {1}), {-1}),
                    test::Placed("nx::dynamic_slice: sizes [-1] do not fit in float64 [3]"));
}

TEST_CASE("ranks past 64 are refused, and their shapes print short") {
  CHECK_THROWS_WITH(nx::zeros(float64, nx::Shape(60000, 1)),
                    "nx::zeros: shape [1, 1, 1, ..., 1, 1, 1] has rank 60000, more than 64");
  nx::Tensor deepest = nx::zeros(float64, nx::Shape(64, 1));
  CHECK_THAT(test::text(deepest), Catch::Matchers::EndsWith(std::string(64, '[') + "0" + std::string(64, ']')));
  // (a composite names itself in its parts' errors)
  CHECK_THROWS_WITH(nx::expand_dims(deepest, {0}), StartsWith("nx::expand_dims: cannot reshape float64 [1, 1, 1,"));
}

TEST_CASE("slice and pad parameters at the int64 limits") {
  nx::Tensor x = nx::arange(float64, 0, 5);
  CHECK(test::text(nx::slice(x, {0}, {5}, {INT64_MAX})) == "float64 [1] [0]");
  CHECK(test::text(nx::slice(x, {0}, {5}, {INT64_MAX - 1})) == "float64 [1] [0]");
  CHECK(test::text(nx::slice(x, {INT64_MIN}, {INT64_MAX}, {2})) == "float64 [3] [0, 2, 4]");
  const std::string longer = "nx::pad: padding axis 0 of float64 [5] makes it longer than 2^48 elements";
  CHECK_THROWS_WITH(nx::pad(x, {{INT64_MAX, 1}}), test::Placed(longer));
  CHECK_THROWS_WITH(nx::pad(x, {{std::int64_t(1) << 61, 0}}), test::Placed(longer));
  CHECK_THROWS_WITH(nx::pad(x, {{-1, 0}}), test::Placed("nx::pad: pad widths must not be negative"));
  // One row of a padded axis: the interior width is never used.
  CHECK(test::text(nx::pad(nx::zeros(float64, {1}), {{1, 1}}, 7)) == "float64 [3] [7, 0, 7]");
}

TEST_CASE("creation functions refuse what they cannot make with invalid_argument") {
  CHECK_THROWS_WITH(nx::arange(float64, 0, 1e300),
                    "nx::arange: the range holds more than 2^48 elements (the most one value may hold)");
  CHECK_THROWS_WITH(nx::linspace(float64, 0, 1, INT64_MAX), "nx::linspace: shape [9223372036854775807] " + too_many);
  CHECK_THROWS_WITH(nx::linspace(float64, 0, 1, -1), "nx::linspace: n = -1 is negative");
  CHECK(test::text(nx::eye(nx::int32, 3)) == "int32 [3, 3] [[1, 0, 0], [0, 1, 0], [0, 0, 1]]");
  CHECK(test::text(nx::linspace(float64, 0, 1, 3)) == "float64 [3] [0, 0.5, 1]");
}

TEST_CASE("empty tensors: printing stays short, logsumexp is -inf") {
  CHECK(nx::to_string(nx::zeros(float64, {100000000, 0})) == "float64 [100000000, 0] [[], [], [], ..., [], [], []]");
  CHECK(nx::to_string(nx::zeros(float64, {2, 0})) == "float64 [2, 0] [[], []]");
  CHECK(test::text(nx::logsumexp(nx::zeros(float64, {0}))) == "float64 [] -inf");
  CHECK(test::text(nx::logsumexp(nx::zeros(float64, {2, 0}), {1})) == "float64 [2] [-inf, -inf]");
  CHECK(test::text(nx::logsumexp(nx::zeros(float64, {0, 2}), {1})) == "float64 [0] []");
}

TEST_CASE("a traced function returning an empty Tensor is refused, naming the result") {
  auto empty = [](const nx::Tensor&) { return nx::Tensor(); };
  auto second_empty = [](const nx::Tensor& x) { return std::pair{x, nx::Tensor()}; };
  nx::Tensor x = nx::zeros(float64, {2});
  const std::string no_value = " holds no value (it was default-constructed)";
  CHECK_THROWS_WITH(rune::program(empty, x), "rune::program: the result" + no_value);
  CHECK_THROWS_WITH(rune::jit(second_empty)(x), "rune::jit: the result 1" + no_value);
  CHECK_THROWS_WITH(rune::scan([](const nx::Tensor& c, const nx::Tensor&) { return std::pair{c, nx::Tensor()}; }, x,
                               nx::zeros(float64, {3})),
                    "rune::scan: the result 1" + no_value);
  CHECK_THROWS_WITH(rune::grad(empty, x), "rune::grad: the result" + no_value);
  CHECK_THROWS_WITH(rune::jvp(empty, x, x), "rune::jvp: the result" + no_value);
}

namespace {
std::string parse_error(const std::string& text) {
  try {
    rune::parse_program(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(parsed)";
}
const std::string huge = "float64 [4294967296, 4294967296] at CPU";
}  // namespace

TEST_CASE("the parser refuses types past the limits wherever they appear") {
  const std::string refused = "shape [4294967296, 4294967296] " + too_many;
  CHECK(parse_error("program (%0 : " + huge + ")\n  return %0\n") ==
        "rune::parse_program: line 1, column 23: " + refused);
  CHECK(parse_error("program ()\n  %0 : " + huge + " = constant []\n  return %0\n") ==
        "rune::parse_program: line 2, column 16: " + refused);
  CHECK(parse_error("program ()\n  %0 : float64 [] at CPU = Map [float64:0x0000000000000000] at CPU\n"
                    "  %1 : float64 [2] at CPU = broadcast(%0) shape=[4294967296, 4294967296]\n  return %1\n") ==
        "rune::parse_program: line 3, column 29: nx::broadcast_to: " + refused);
  CHECK(parse_error("program (%0 : float64 [0] at CPU)\n"
                    "  %1 : float64 [2] at CPU = reshape(%0) shape=[4611686018427387904, 4]\n  return %1\n") ==
        "rune::parse_program: line 2, column 29: nx::reshape: cannot reshape float64 [0] (0 elements) into "
        "[4611686018427387904, 4]");
  CHECK(parse_error("program (%0 : float64 [0] at CPU)\n"
                    "  %1 : float64 [2] at CPU = reshape(%0) shape=[-1, 0]\n  return %1\n") ==
        "rune::parse_program: line 2, column 29: nx::reshape: cannot reshape float64 [0] (0 elements) into [-1, 0]");
  // A scan stacking its rows past the limit.
  CHECK(parse_error("program (%0 : float64 [131072] at CPU)\n"
                    "  %1 : float64 [131072] at CPU, %2 : float64 [2] at CPU = "
                    "scan 4294967296 rows, init (%0), xs (), captures ()\n"
                    "    step\n      program (%3)\n        return %3, %3\n  return %2\n") ==
        "rune::parse_program: line 2, column 59: rune::scan: shape [4294967296, 131072] " + too_many);
}

TEST_CASE("the parser refuses a scan whose step returns fewer values than its carry") {
  CHECK(parse_error("program (%0 : float64 [] at CPU)\n"
                    "  %1 : float64 [] at CPU = scan 2 rows, init (%0), xs (), captures ()\n"
                    "    step\n      program (%2)\n        return\n  return %1\n") ==
        "rune::parse_program: line 2, column 28: rune::scan: the step returns 0 values, fewer than the 1 of the "
        "carry");
}

namespace {
// A program of `depth` scans, each in the step of the one before (the parser
// reads no indentation, so none is written: 7,000 levels stay a small text).
std::string nested_scans(int depth) {
  auto value = [](int n) { return std::string("%").append(std::to_string(n)); };
  std::string text = "program (%0 : float64 [] at CPU)\n";
  for (int d = 0; d < depth; ++d)
    text += value(2 * d + 1) + " : float64 [] at CPU = scan 1 rows, init (" + value(2 * d) +
            "), xs (), captures ()\nstep\nprogram (" + value(2 * d + 2) + ")\n";
  text += "return " + value(2 * depth) + "\n";
  for (int d = depth; d-- > 0;) text += "return " + value(2 * d + 1) + "\n";
  return text;
}
}  // namespace

TEST_CASE("sub-programs nest at most 64 deep in program text") {
  rune::Program deepest = rune::parse_program(nested_scans(rune::max_nesting));
  CHECK(test::text(rune::run(deepest, {nx::scalar(float64, 2.5)})[0]) == "float64 [] 2.5");
  CHECK(rune::parse_program(rune::to_string(deepest)) == deepest);
  CHECK_THAT(parse_error(nested_scans(rune::max_nesting + 1)),
             Contains("sub-programs nest more than 64 deep"));
  // Far deeper than the stack would allow if the parser recursed without a limit.
  CHECK_THAT(parse_error(nested_scans(7000)), Contains("sub-programs nest more than 64 deep"));
}

TEST_CASE("a compiled function owns the constants it read at the trace") {
  nx::Tensor c = f64({3}, {1, 2, 3});
  auto f = rune::jit([&](const nx::Tensor& x) { return x + c; });
  rune::Program p = rune::program([&](const nx::Tensor& x) { return x * c; }, c);
  CHECK(test::values(f(nx::donate(c))) == std::vector<double>{2, 4, 6});
  CHECK_THROWS_WITH(nx::to_vector<double>(c), "nx::to_vector: float64 [3] was donated to rune::jit");
  nx::Tensor ones = nx::ones(float64, {3});
  CHECK(test::values(f(ones)) == std::vector<double>{2, 3, 4});
  CHECK(test::values(rune::run(p, {ones})[0]) == std::vector<double>{1, 2, 3});
}

TEST_CASE("a compiled call's results share no storage with its arguments or constants") {
  nx::Tensor w = f64({3}, {1, 2, 3});
  auto identity = rune::jit([](const nx::Tensor& x) { return x; });
  nx::Tensor same = identity(w);
  auto twice = rune::jit([](const nx::Tensor& x) { return x * 2.; });
  (void)twice(nx::donate(same));
  CHECK(test::values(w) == std::vector<double>{1, 2, 3});
  nx::Tensor c = f64({2}, {5, 6});
  auto constant = rune::jit([&](const nx::Tensor&) { return nx::reshape(c, {2, 1}); });
  (void)twice(nx::donate(constant(w)));
  CHECK(test::values(constant(w)) == std::vector<double>{5, 6});
}

TEST_CASE("threads meeting a new key at once trace it once") {
  for (int round = 0; round < 20; ++round) {
    auto f = rune::jit([](const nx::Tensor& x) { return nx::sum(x * x); });
    std::barrier start(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        (void)f(nx::ones(float64, {2 + i % 2}));
      });
    for (auto& t : threads) t.join();
    REQUIRE(f.traces() == 2);
  }
}

TEST_CASE("second derivatives of prod are exact at zeros") {
  auto product = [](const nx::Tensor& v) { return nx::prod(v); };
  nx::Tensor x = f64({3}, {0, 2, 3});
  const std::string hessian = "float64 [3, 3] [[0, 3, 2], [3, 0, 0], [2, 0, 0]]";
  CHECK(test::text(rune::hessian(product, x)) == hessian);
  CHECK(test::text(rune::jacrev(rune::grad(product), x)) == hessian);
  CHECK(test::text(rune::jvp(rune::grad(product), x, f64({3}, {1, 0, 0})).second) == "float64 [3] [0, 3, 2]");
  // Two zeros: the gradient is zero, the Hessian is not.
  nx::Tensor y = f64({3}, {0, 0, 3});
  CHECK(test::text(rune::grad(product, y)) == "float64 [3] [0, 0, 0]");
  CHECK(test::text(rune::hessian(product, y)) == "float64 [3, 3] [[0, 3, 0], [3, 0, 0], [0, 0, 0]]");
  // Over some axes of a matrix, under jit.
  auto rows = [](const nx::Tensor& m) { return nx::sum(nx::prod(m, {1})); };
  nx::Tensor m = f64({2, 3}, {0, 2, 3, 1, 0, 0});
  CHECK(test::text(rune::jit(rune::grad(rows))(m)) == "float64 [2, 3] [[6, 0, 0], [0, 0, 0]]");
}

// Programs the fuzz targets' reproducers kept (tests/hostile/), each refused
// with its reason.
TEST_CASE("the fuzzers' findings are refused with their reasons") {
  const std::pair<const char*, std::string> findings[] = {
      {"concatenate_size_overflow", "line 1, column 23: shape [9223372036854775807] " + too_many},
      {"pad_interior_overflow", "line 2, column 29: nx::pad: padding axis 0 of float64 [3] makes it longer than 2^48 elements"},
      {"pad_size_overflow", "line 2, column 29: nx::pad: padding axis 0 of float64 [2] makes it longer than 2^48 elements"},
      {"reshape_numel_overflow",
       "line 2, column 29: nx::reshape: cannot reshape float64 [0] (0 elements) into [4294967296, 4294967296, 0]"},
      {"scan_step_too_short", "line 3, column 28: rune::scan: the step returns 1 value, fewer than the 2 of the carry"},
      // Issue 25: a map or a total of the process that traced the program,
      // which text cannot name, and roots the implicit function theorem
      // cannot differentiate.
      {"lanes_gather_without_shape",
       "line 2, column 32: lanes_gather names map 1, an object of the process that traced the program, which program "
       "text cannot name"},
      {"total_add_uncollected",
       "line 2, column 5: total_add adds to total 1, which no collect around it opens: total 1 is a rune::Total, an "
       "object of the process that traced the program, which program text cannot name"},
      {"root_empty_point", "line 2, column 5: rune::root: the point holds no value"},
      {"root_residual_float32",
       "line 2, column 28: rune::root: the residual returns float32 [] where the point is float64 []"},
  };
  for (const auto& [name, message] : findings) {
    INFO(name);
    CHECK_THROWS_WITH(rune::load_program(std::string(RUNE_HOSTILE_DIR) + "/" + name + ".rune"),
                      "rune::parse_program: " + message);
  }
}

TEST_CASE("a collective's lane count is checked by its type rule, not read past its parameters (issue 25)") {
  nx::ops::Params params;
  params.axis = 1;
  const nx::Tensor x = nx::zeros(float64, {2});
  CHECK_THROWS_WITH(nx::ops::result_type(nx::ops::Prim::lanes_gather, std::span<const nx::Tensor>(&x, 1), params),
                    "rune::lanes: the lane count is shape=[count], got shape=[]");
  params.shape = {3};
  params.axis = 0;
  CHECK_THROWS_WITH(nx::ops::result_type(nx::ops::Prim::lanes_sum, std::span<const nx::Tensor>(&x, 1), params),
                    "rune::lanes: axis=0 names no map");
}

TEST_CASE("an add of another dtype or shape than its total's names rune::Total::add (issue 25)") {
  rune::Total t;
  auto adding = [&](const nx::Tensor& v) {
    return [&t, v] {
      t.add(v);
      return 0;
    };
  };
  CHECK_THROWS_WITH(rune::collect(t, nx::scalar(float64, 0.), adding(nx::scalar(nx::int32, 1.))),
                    "rune::Total::add: int32 [] added to a total of float64 []");
  CHECK_THROWS_WITH(rune::collect(t, nx::zeros(float64, {2}), adding(nx::zeros(float64, {3}))),
                    "rune::Total::add: float64 [3] added to a total of float64 [2]");
  CHECK_THROWS_WITH(rune::collect(t, nx::zeros(nx::bool_, {}), adding(nx::zeros(nx::bool_, {}))),
                    "rune::Total::add: bool [] added to a total of bool []");
  auto compiled = rune::jit([&](const nx::Tensor& x) {
    t.add(x);
    return x;
  });
  CHECK_THROWS_WITH(rune::collect(t, nx::scalar(float64, 0.), [&] { return compiled(nx::scalar(nx::float32, 1.)); }),
                    "rune::Total::add: float32 [] added to a total of float64 []");
  // A row added to every row of the total keeps its shape: accepted.
  auto [r, total] = rune::collect(t, nx::zeros(float64, {2, 2}), adding(f64({2}, {1, 2})));
  CHECK(test::text(total) == "float64 [2, 2] [[1, 2], [1, 2]]");
}
