// Small tensors as scalars (ir/passes/scalarize.hpp): which values the
// compiled program computes as their elements, and that its bits are
// eager's, for every primitive of the table (each of its sample calls run
// as a loop's carry), for reductions at special values, and for the loops
// a game writes over vec3 state.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "ir/passes/scalarize.hpp"
#include "primitive_cases.hpp"
#include <rune/rune.hpp>

using test::same_bits;

namespace {

// The first scan or iterate of a program (what it computes), found
// through the constructs' sub-programs.
const rune::ir::Equation* first_loop(const rune::ir::Program& p) {
  for (const auto& eq : p.equations) {
    if (eq.kind == rune::ir::OpKind::scan || eq.kind == rune::ir::OpKind::iterate) return &eq;
    for (const auto& sub : eq.programs)
      if (const auto* loop = first_loop(*sub)) return loop;
  }
  return nullptr;
}

// Whether every value of a loop's sub-programs is 0-d: the loop runs on
// scalars only.
bool scalars_only(const rune::ir::Equation& loop) {
  for (const auto& sub : loop.programs)
    for (const auto& t : sub->types)
      if (!t.shape.empty()) return false;
  return true;
}

const rune::ir::Equation& compiled_loop(const rune::Program& p) {
  const rune::ir::Equation* loop = first_loop(p.ir());
  REQUIRE(loop != nullptr);
  return *loop;
}

// A primitive's sample call as a loop: the operands and the result are
// carried, the step computes the result from the operands again.
std::vector<Tensor> carried(const test::Case& c, const std::vector<Tensor>& carry) {
  std::vector<Tensor> next(carry.begin(), carry.end() - 1);
  next.push_back(bind(c.prim, std::span<const Tensor>(next), c.params));
  return next;
}

// The same bits where neither is a NaN, and NaNs at the same elements
// (whatever their payloads).
bool same_bits_but_nans(const Tensor& a, const Tensor& b) {
  return same_bits(nx::isnan(a), nx::isnan(b)) && same_bits(nx::where(nx::isnan(a), 0., a), nx::where(nx::isnan(b), 0., b));
}

// Checks the compiled loop's bits against eager's, and that it runs on
// scalars where the pass splits the values; gives whether it does.
bool check_case(const test::Case& c, bool any_nan = false) {
  std::vector<Tensor> start = c.operands;
  const Tensor want = bind(c.prim, std::span<const Tensor>(c.operands), c.params);
  start.push_back(nx::zeros_like(want));
  auto loop = [&](const std::vector<Tensor>& carry) {
    return rune::scan([&](const std::vector<Tensor>& s) { return std::pair{carried(c, s), std::tuple<>{}}; }, carry,
                      std::int64_t(2))
        .first;
  };
  auto compiled = rune::jit(loop);
  const std::vector<Tensor> got = compiled(start);
  INFO(info(c.prim).name << " on " << nx::ops::describe(c.operands[0]));
  if (any_nan) CHECK(same_bits_but_nans(got.back(), want));
  else CHECK(same_bits(got.back(), want));
  // What the pass splits: small values computed by these families, from
  // operands that are all small (or 0-d).
  bool splits = nx::numel(want.shape()) <= rune::ir::default_scalar_elements && want.ndim() > 0 &&
                want.dtype() != nx::complex128;
  for (const Tensor& x : c.operands) splits = splits && nx::numel(x.shape()) <= rune::ir::default_scalar_elements;
  const bool reduction = c.prim == Prim::reduce_sum || c.prim == Prim::reduce_prod || c.prim == Prim::reduce_max ||
                         c.prim == Prim::reduce_min;
  const bool float_row = want.dtype() == nx::float32 || want.dtype() == nx::float64;
  splits = splits && (nx::ops::is_elementwise(c.prim) || (reduction && float_row) || c.prim == Prim::reshape || c.prim == Prim::transpose ||
                      c.prim == Prim::slice || c.prim == Prim::concatenate || c.prim == Prim::flip);
  const bool scalars = scalars_only(compiled_loop(compiled.program(start)));
  if (splits) CHECK(scalars);
  return scalars;
}

Tensor with_bits(nx::DType dtype, std::initializer_list<std::uint64_t> bits, const nx::Shape& shape) {
  Tensor t = nx::ops::make_tensor(dtype, shape);
  std::size_t k = 0;
  for (std::uint64_t b : bits) {
    if (dtype == nx::float64) std::memcpy(nx::ops::data_of<char>(t) + 8 * k, &b, 8);
    else {
      const auto b32 = std::uint32_t(b);
      std::memcpy(nx::ops::data_of<char>(t) + 4 * k, &b32, 4);
    }
    ++k;
  }
  return t;
}

}  // namespace

TEST_CASE("every primitive's sample call carried by a loop gives eager's bits; small ones run as scalars") {
  for (const test::Case& c : test::samples()) check_case(c);
  for (const test::Case& c : test::cases(nx::float32)) check_case(c);
  // the sizes around the bound: 1, 3 and 8 elements split, 9 does not
  std::mt19937 rng(11);
  for (const nx::Shape& shape : {nx::Shape{1}, nx::Shape{3}, nx::Shape{2, 4}, nx::Shape{9}})
    for (int i = 0; i < prim_count; ++i) {
      const Prim p = Prim(i);
      if (info(p).family != Family::unary && info(p).family != Family::binary) continue;
      if (!(info(p).accepts & F)) continue;
      auto [lo, hi] = test::domain(p);
      std::vector<Tensor> operands;
      for (int k = 0; k < info(p).arity; ++k) operands.push_back(test::uniform(nx::float64, shape, lo, hi, rng));
      const bool scalars = check_case({p, operands, {}});
      CHECK(scalars == (shape != nx::Shape{9}));
    }
}

TEST_CASE("reductions of split values combine in eager's order: signed zeros, NaN payloads, infinities") {
  const std::uint64_t nan1 = 0x7ff8000000000001, nan2 = 0x7ff8000000000002, negzero = 0x8000000000000000,
                      inf = 0x7ff0000000000000, one = 0x3ff0000000000000, tiny = 0x0000000000000001;
  const std::uint64_t nan1f = 0x7fc00001, nan2f = 0x7fc00002, negzerof = 0x80000000, inff = 0x7f800000,
                      onef = 0x3f800000, tinyf = 0x00000001;
  for (const auto dtype : {nx::float64, nx::float32}) {
    const bool f64 = dtype == nx::float64;
    const std::vector<Tensor> rows = {
        with_bits(dtype, {f64 ? negzero : negzerof, f64 ? negzero : negzerof, f64 ? negzero : negzerof}, {3}),
        with_bits(dtype, {f64 ? one : onef, f64 ? nan1 : nan1f, f64 ? nan2 : nan2f, f64 ? inf : inff}, {2, 2}),
        with_bits(dtype, {f64 ? tiny : tinyf, f64 ? negzero : negzerof, f64 ? inf : inff, f64 ? one : onef, f64 ? one : onef,
                          f64 ? nan2 : nan2f},
                  {2, 3}),
        with_bits(dtype, {f64 ? negzero : negzerof}, {1}),
        nx::reshape(nx::arange(dtype, -0.35, 0.45, 0.1), {2, 4}),
    };
    for (const Tensor& x : rows)
      for (const Prim p : {Prim::reduce_sum, Prim::reduce_prod, Prim::reduce_max, Prim::reduce_min})
        for (const nx::Axes& axes : {nx::Axes{0}, nx::Axes{1}, nx::Axes{0, 1}, nx::Axes{1, 0}}) {
          if (std::int64_t(axes.size()) > x.ndim() || (x.ndim() == 1 && axes[0] != 0)) continue;
          Params q;
          q.axes = axes;
          // (two NaNs meeting in a sum or product: docs/accuracy.md fixes no payload)
          check_case({p, {x}, q}, p == Prim::reduce_sum || p == Prim::reduce_prod);
        }
  }
}

namespace {
Tensor lorenz(const Tensor& s) {
  const Tensor x = nx::get(s, 0), y = nx::get(s, 1), z = nx::get(s, 2);
  const Tensor ds = nx::stack({10.0 * (y - x), x * (28.0 - z) - y, x * y - (8.0 / 3) * z});
  return s + 0.001 * ds;
}
}  // namespace

TEST_CASE("a scan over a float64 [3] state runs on three scalars with eager's bits") {
  auto flight = [](const Tensor& s) {
    return rune::scan([](const Tensor& c) { return std::pair{lorenz(c), std::tuple<>{}}; }, s, std::int64_t(100)).first;
  };
  const Tensor start = nx::create(nx::float64, {3}, {1., 1., 1.});
  Tensor eager = start;
  for (int i = 0; i < 100; ++i) eager = lorenz(eager);
  auto compiled = rune::jit(flight);
  CHECK(same_bits(compiled(start), eager));
  const rune::Program p = compiled.program(start);
  const rune::ir::Equation& loop = compiled_loop(p);
  CHECK(scalars_only(loop));
  CHECK(std::get<rune::ir::ScanInfo>(loop.info).carry_count == 3);
  CHECK_THAT(rune::bytecode(p), Contains("scalar registers, 0 tensor registers"));
}

TEST_CASE("a captured vec3, a norm and an iterate's until over a vec3 carry run on scalars") {
  const Tensor gravity = nx::create(nx::float64, {3}, {0., -9.8, 0.});
  auto fall = [&](const Tensor& p, const Tensor& v) {
    return rune::iterate(
        1000,
        [](const std::pair<Tensor, Tensor>& s) { return nx::less(nx::get(s.first, 1), 0.); },
        [&](const std::pair<Tensor, Tensor>& s) {
          const Tensor speed = nx::sqrt(nx::sum(s.second * s.second, {0}));
          const Tensor drag = s.second * (0.01 * speed);
          return std::pair{s.first + 0.01 * s.second, s.second + 0.01 * (gravity - drag)};
        },
        std::pair{p, v});
  };
  const Tensor p0 = nx::create(nx::float64, {3}, {0., 10., 0.}), v0 = nx::create(nx::float64, {3}, {3., 4., 1.});
  auto eager = fall(p0, v0);
  auto compiled = rune::jit(fall);
  auto got = compiled(p0, v0);
  CHECK(same_bits(got.first, eager.first));
  CHECK(same_bits(got.second, eager.second));
  const rune::ir::Equation& loop = compiled_loop(compiled.program(p0, v0));
  CHECK(scalars_only(loop));
  CHECK(std::get<rune::ir::IterateInfo>(loop.info).carry_count == 6);
}

TEST_CASE("a small value read whole (a matmul) is put back together; one nothing reads on parts stays a tensor") {
  const Tensor m = nx::create(nx::float64, {3, 3}, {1., 0.5, 0., -0.5, 1., 0., 0., 0., 1.});
  auto spin = [&](const Tensor& s) {
    return rune::scan([&](const Tensor& c) { return std::pair{nx::matmul(m, lorenz(c)), std::tuple<>{}}; }, s,
                      std::int64_t(20))
        .first;
  };
  const Tensor start = nx::create(nx::float64, {3}, {1., 2., 3.});
  Tensor eager = start;
  for (int i = 0; i < 20; ++i) eager = nx::matmul(m, lorenz(eager));
  auto compiled = rune::jit(spin);
  CHECK(same_bits(compiled(start), eager));
  // the carry comes out of a matmul: not split, so the loop carries one tensor
  CHECK(std::get<rune::ir::ScanInfo>(compiled_loop(compiled.program(start)).info).carry_count == 1);
}

TEST_CASE("JitOptions::scalar_elements bounds the values split: 0 splits none") {
  auto flight = [](const Tensor& s) {
    return rune::scan([](const Tensor& c) { return std::pair{lorenz(c) * 1.5, std::tuple<>{}}; }, s, std::int64_t(10))
        .first;
  };
  const Tensor three = nx::create(nx::float64, {3}, {1., 1., 1.});
  const Tensor nine = nx::reshape(nx::arange(nx::float64, 1., 10.), {3, 3});
  auto nine_step = [](const Tensor& s) {
    return rune::scan([](const Tensor& c) { return std::pair{nx::sin(c) * 0.5 + c, std::tuple<>{}}; }, s, std::int64_t(10))
        .first;
  };
  auto carries = [](const rune::Program& p) { return std::get<rune::ir::ScanInfo>(compiled_loop(p).info).carry_count; };
  auto none = rune::jit(flight, rune::JitOptions{.scalar_elements = 0});
  CHECK(carries(none.program(three)) == 1);
  CHECK(same_bits(none(three), rune::jit(flight)(three)));
  CHECK(carries(rune::jit(nine_step).program(nine)) == 1);
  auto wider = rune::jit(nine_step, rune::JitOptions{.scalar_elements = 9});
  CHECK(carries(wider.program(nine)) == 9);
  CHECK(same_bits(wider(nine), nine_step(nine)));
  CHECK_THROWS_WITH(rune::jit(flight, rune::JitOptions{.scalar_elements = -1}),
                    "rune::jit: scalar_elements = -1 is outside 0 .. 64");
  CHECK_THROWS_WITH(rune::jit(flight, rune::JitOptions{.scalar_elements = 65}),
                    "rune::jit: scalar_elements = 65 is outside 0 .. 64");
}
