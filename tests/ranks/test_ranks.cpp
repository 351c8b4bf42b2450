// The collectives over the ranks of an MPI job, run by meson under
// `mpiexec -n P` for P = 1..4 (the `ranks` suite): on every rank, each
// collective against the same function under rune::vmap over P lanes in
// this one process, bit for bit (values whose sums differ by order, sizes
// on both sides of the split between gathering and summing by parts);
// compiled against eager; jvp and grad against central differences of
// the job's whole objective; a program traced and saved by rank 0, loaded
// and run by every rank. Every rank runs every check.
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include <rune/rune.hpp>

#include "helpers.hpp"

using nx::Tensor;

namespace {

const std::int64_t P = rune::lane_count(rune::ranks());
const std::int64_t me = std::int64_t(nx::item(rune::lane_index(rune::ranks())));

// Rank (or lane) r's operand: n elements whose sums over ranks depend on
// the order of addition (large and small magnitudes, alternating signs).
Tensor operand(std::int64_t r, std::int64_t n, nx::DType dtype) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) {
    const double scale = (i + r) % 3 == 0 ? 1e16 : (i + r) % 3 == 1 ? 1.0 : 1e-3;
    v.push_back(scale * ((r + i) % 2 ? -1.0 : 1.0) * (1.0 + 0.37 * double(r) + 0.011 * double(i % 97)));
  }
  return nx::cast(nx::create(nx::float64, {n}, v), dtype);
}

// Every rank's operand stacked: the lanes of the reference map.
Tensor all_operands(std::int64_t n, nx::DType dtype) {
  std::vector<Tensor> rows;
  for (std::int64_t r = 0; r < P; ++r) rows.push_back(operand(r, n, dtype));
  return nx::stack(rows);
}

// f over the ranks on this rank's operand, and this rank's lane of f over P
// lanes of a map (with the map's axis for the ranks'), compared bit for bit.
template <class F> void same_as_a_map(F f, std::int64_t n, nx::DType dtype) {
  INFO("n = " << n << ", " << nx::name(dtype) << ", rank " << me << " of " << P);
  const Tensor over_ranks = f(rune::ranks(), operand(me, n, dtype));
  const rune::Axis a = rune::axis();
  const Tensor over_lanes = rune::vmap([&](const Tensor& x) { return f(a, x); }, a)(all_operands(n, dtype));
  CHECK(test::same_bits(over_ranks, nx::get(over_lanes, me)));
  const Tensor compiled = rune::jit([&](const Tensor& x) { return f(rune::ranks(), x); })(operand(me, n, dtype));
  CHECK(test::same_bits(compiled, over_ranks));
}

using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

Pairs ring() {
  Pairs pairs;
  for (std::int64_t r = 0; r < P; ++r) pairs.push_back({r, (r + 1) % P});
  return pairs;
}

// The sizes: a few elements (fewer than the ranks, too), and past the
// 64 KiB of rows above which each rank sums a part (not divisible by P).
const std::int64_t sizes[] = {1, 5, 3001, 20011};

}  // namespace

TEST_CASE("the ranks axis: rank and world size") {
  CHECK(P >= 1);
  CHECK(me < P);
  CHECK(rune::lane_count(rune::ranks()) == P);
  CHECK(std::int64_t(nx::item(rune::lane_index(rune::ranks()))) == me);
}

TEST_CASE("psum and pmean over the ranks: the bits of the same sum over lanes") {
  for (nx::DType dtype : {nx::float64, nx::float32, nx::int32})
    for (std::int64_t n : sizes) {
      same_as_a_map([](rune::Axis a, const Tensor& x) { return rune::psum(a, x); }, n, dtype);
      if (dtype != nx::int32) same_as_a_map([](rune::Axis a, const Tensor& x) { return rune::pmean(a, x); }, n, dtype);
    }
}

TEST_CASE("a sum of -0 on every rank is +0, as nx::sum's accumulators start at +0") {
  for (nx::DType dtype : {nx::float64, nx::float32, nx::complex64}) {
    const Tensor zeros = nx::cast(nx::full(nx::float64, {5}, -0.0), dtype);
    const Tensor over_ranks = rune::psum(rune::ranks(), zeros);
    const rune::Axis a = rune::axis();
    const Tensor over_lanes = rune::vmap([&](const Tensor& x) { return rune::psum(a, x); }, a)(
        nx::broadcast_to(zeros, {P, 5}));
    CHECK(test::same_bits(over_ranks, nx::get(over_lanes, me)));
    CHECK(test::same_bits(over_ranks, nx::zeros(dtype, {5})));  // (+0: 0.0 + -0.0)
  }
}

TEST_CASE("all_gather, ppermute and broadcast_from over the ranks") {
  for (std::int64_t n : {std::int64_t(1), std::int64_t(7), std::int64_t(20011)}) {
    same_as_a_map([](rune::Axis a, const Tensor& x) { return rune::all_gather(a, x); }, n, nx::float64);
    same_as_a_map([](rune::Axis a, const Tensor& x) { return rune::ppermute(a, x, ring()); }, n, nx::float64);
    same_as_a_map([](rune::Axis a, const Tensor& x) { return rune::ppermute(a, x, Pairs{{0, P - 1}}); }, n,
                  nx::float32);
    same_as_a_map([](rune::Axis a, const Tensor& x) { return rune::broadcast_from(a, x, P - 1); }, n, nx::float64);
  }
}

TEST_CASE("psum of a structure: one sum per dtype, each leaf's bits") {
  auto f = [](rune::Axis a, const Tensor& x) {
    auto s = rune::psum(a, std::tuple{x, x * 3., nx::reshape(x, {1, -1}), nx::cast(x, nx::float32)});
    auto m = rune::pmean(a, std::vector<Tensor>{x, -x});
    return nx::concatenate({std::get<0>(s), std::get<1>(s), nx::reshape(std::get<2>(s), {-1}),
                            nx::cast(std::get<3>(s), nx::float64), m[0], m[1]});
  };
  for (std::int64_t n : sizes) same_as_a_map(f, n, nx::float64);
}

TEST_CASE("a map inside a rank: collectives over the ranks of every lane at once") {
  const Tensor xs = nx::stack({operand(me, 9, nx::float64), operand(me + 1, 9, nx::float64)});
  auto f = [](const Tensor& x) { return rune::psum(rune::ranks(), nx::sin(x)) + rune::ppermute(rune::ranks(), x, ring()); };
  const Tensor mapped = rune::vmap(f)(xs);
  CHECK(test::same_bits(nx::get(mapped, 1), f(nx::get(xs, 1))));
  CHECK(test::same_bits(rune::jit(rune::vmap(f))(xs), mapped));
  auto gathered = [](const Tensor& x) { return rune::all_gather(rune::ranks(), x); };
  CHECK(test::same_bits(nx::get(rune::vmap(gathered)(xs), 0), gathered(nx::get(xs, 0))));
}

// The job's objective: the sum over ranks of each rank's own loss, which
// psum makes every rank's value. Its gradient on rank r is the derivative
// with respect to rank r's x (psum's transpose is psum).
TEST_CASE("grad and jvp through psum, ppermute and all_gather: central differences of the job's objective") {
  const Tensor x = operand(me, 3, nx::float64) * 1e-16 + 0.5;  // (values of order 1)
  auto local = [](const Tensor& v) {
    const Tensor s = rune::psum(rune::ranks(), v * v);
    const Tensor shifted = rune::ppermute(rune::ranks(), nx::sin(v), ring());
    const Tensor all = rune::all_gather(rune::ranks(), nx::exp(v));
    return nx::sum(nx::sin(s) * shifted) + nx::sum(all * all) / double(P);
  };
  auto job = [&](const Tensor& v) { return rune::psum(rune::ranks(), local(v)); };
  const Tensor g = rune::grad(local)(x);
  const double h = 1e-6;
  // Each rank's coordinates in turn, perturbed on that rank alone, every rank evaluating the job.
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < 3; ++i) {
      Tensor e = nx::zeros(nx::float64, {3});
      if (r == me) e = nx::scatter_add(e, nx::scalar(nx::int64, double(i)), nx::scalar(nx::float64, h));
      const double central = (nx::item(job(x + e)) - nx::item(job(x - e))) / (2 * h);
      if (r == me) CHECK(std::abs(test::values(g)[std::size_t(i)] - central) < 1e-6 * (1 + std::abs(central)));
    }
  // jvp: every rank moves along its own direction at once.
  const Tensor t = nx::arange(nx::float64, 0, 3) - double(me);
  const auto [value, tangent] = rune::jvp(local, x, t);
  const double central = (nx::item(local(x + t * h)) - nx::item(local(x - t * h))) / (2 * h);
  CHECK(test::same_bits(value, local(x)));
  CHECK(std::abs(nx::item(tangent) - central) < 1e-6 * (1 + std::abs(central)));
  // Compiled, the same bits.
  CHECK(test::same_bits(rune::jit(rune::grad(local))(x), g));
}

TEST_CASE("a program traced and saved by rank 0, loaded and run by every rank") {
  auto f = [](const Tensor& x) {
    const Tensor rank = nx::cast(rune::lane_index(rune::ranks()), nx::float64);  // (the running process's)
    return std::tuple{rune::psum(rune::ranks(), x * 2.), rune::ppermute(rune::ranks(), x, ring()),
                      rune::all_gather(rune::ranks(), x) + rank};
  };
  const Tensor x = operand(me, 5, nx::float64);
  const auto file = std::filesystem::path(RUNE_TEST_OUT) / ("ranks_" + std::to_string(P) + ".rune");
  if (me == 0) rune::save_program(rune::program(f, x), file);
  rune::psum(rune::ranks(), nx::scalar(nx::int32, 0));  // (every rank waits for the file)
  const std::vector<Tensor> got = rune::run(rune::load_program(file), {x});
  const auto [sum, shifted, all] = f(x);
  CHECK(test::same_bits(got[0], sum));
  CHECK(test::same_bits(got[1], shifted));
  CHECK(test::same_bits(got[2], all));
}

TEST_CASE("the errors of the ranks' collectives") {
  const Tensor x = operand(me, 2, nx::float64);
  using Catch::Matchers::Contains;
  using Catch::Matchers::StartsWith;
  const std::string world = std::to_string(P) + (P == 1 ? " rank" : " ranks");
  CHECK_THROWS_WITH(rune::ppermute(rune::ranks(), x, Pairs{{0, P}}),
                    StartsWith("rune::ppermute: rank " + std::to_string(P) + " is outside a world of " + world + " (at "));
  CHECK_THROWS_WITH(rune::ppermute(rune::ranks(), x, Pairs{{0, 0}, {0, 0}}),
                    StartsWith("rune::ppermute: rank 0 is named twice as a receiver (at "));
  CHECK_THROWS_WITH(rune::broadcast_from(rune::ranks(), x, -1),
                    StartsWith("rune::broadcast_from: root -1 is outside a world of " + world + " (at "));
  CHECK_THROWS_WITH(rune::vmap([](const Tensor& v) { return v; }, rune::ranks())(nx::stack({x, x})),
                    StartsWith("rune::vmap: rune::ranks() names the processes of the job, not a map"));
  // A program traced on another number of ranks is refused where it is read.
  std::string text = rune::to_string(rune::program([](const Tensor& v) { return rune::all_gather(rune::ranks(), v); }, x));
  const std::string traced = "[" + std::to_string(P), other = "[" + std::to_string(P + 1);
  for (std::size_t at = text.find(traced); at != std::string::npos; at = text.find(traced, at + other.size()))
    text.replace(at, traced.size(), other);
  CHECK_THROWS_WITH(rune::parse_program(text), Contains("rune::all_gather: the program was traced on " +
                                                        std::to_string(P + 1) + " ranks; this world has " + world));
}
