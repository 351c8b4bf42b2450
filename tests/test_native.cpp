// The machine-code tier (vm/native/): scans and iterates of scalars
// promoted to machine code give the VM's bits (NaN payloads aside),
// whatever their values, types, carries and register pressure. Each program
// runs first on the VM (less work than the promotion threshold), then
// promoted, and the runs are compared with each other and with the
// reference interpreter. Under RUNE_NATIVE=eager every run is promoted;
// under off, none.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <random>
#include <tuple>
#include <vector>

#include "helpers.hpp"
#include "ir/eval.hpp"
#include "ir/passes/pipeline.hpp"
#include "vm/compile.hpp"
#include "vm/listing.hpp"
#include "vm/machine.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using rune::vm::native::Mode;
namespace native = rune::vm::native;

namespace {

// The program of f(init, xs) = rune::scan(step, init, xs), as rune::jit
// compiles it (simplified), with its arguments flattened.
template <class Step> struct ScanCase {
  std::shared_ptr<const rune::vm::Code> code;
  std::vector<Tensor> args;
  ScanCase(Step step, const std::vector<Tensor>& init, const std::vector<Tensor>& xs) : args(init) {
    args.insert(args.end(), xs.begin(), xs.end());
    auto f = [step](const std::vector<Tensor>& c, const std::vector<Tensor>& x) { return rune::scan(step, c, x); };
    code = rune::vm::compile(
        std::make_shared<const rune::ir::Program>(rune::ir::simplify(rune::program(f, init, xs).ir())));
  }
};

// Whether the code's first scan, or its first iterate, ran as machine code.
bool scan_promoted(const rune::vm::Code& code) { return !code.scans.empty() && code.scans[0].native->promoted(); }
bool iterate_promoted(const rune::vm::Code& code) {
  return !code.invokes.empty() && code.invokes[0].native->promoted();
}

// Runs a code whose loop does less work than the promotion threshold per
// run: on the VM, then again until it is promoted (an iterate's trips count
// once run, so its third run is the first promoted); every run agrees with
// the first, and that with the reference interpreter, bit for bit but for
// NaN payloads.
void on_vm_then_native(const rune::vm::Code& code, const std::vector<Tensor>& args, bool promotable = true,
                       bool (*promoted)(const rune::vm::Code&) = scan_promoted) {
  const std::vector<Tensor> evaluated = rune::ir::evaluate(*code.program, args);
  const rune::vm::Values reference(evaluated.begin(), evaluated.end());
  const rune::vm::Values first = rune::vm::run(code, args);
  test::same_results(first, reference);
  if (native::mode() == Mode::on) CHECK(!promoted(code));
  for (int again = 0; again < 2; ++again) test::same_results(rune::vm::run(code, args), first);
  CHECK(promoted(code) == (promotable && native::mode() != Mode::off && native::built()));
}

Tensor f64(double v) { return nx::scalar(nx::float64, v); }

constexpr std::int64_t rows = 600;  // (two runs pass native::promoted_rows; one does not)
static_assert(rows < native::promoted_rows && 2 * rows >= native::promoted_rows);

// Values IEEE arithmetic treats apart: signed zeros, subnormals, infinities, NaN.
double special(std::mt19937& rng, nx::DType dtype) {
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = dtype == nx::float64 ? 4e-310 : 3e-39;
  const double pool[] = {0., -0., tiny, -tiny, inf, -inf, std::nan(""), 1.5, -2.25, 3e5, 1e-3};
  return pool[std::uniform_int_distribution<std::size_t>(0, std::size(pool) - 1)(rng)];
}

// A random step over scalar carries and rows of float32 and float64: inline
// arithmetic, sqrt, abs, comparisons, selects and casts, call-outs (sin,
// exp, maximum), carries that are passed on, swapped or a constant, and rows
// stacked as ys.
struct RandomStep {
  enum Kind { add, sub, mul, div, neg, sin, exp, maximum, choose, cast, scale, root, magnitude };
  struct Node {
    Kind kind;
    std::size_t a, b, which;  // which: choose's comparison
  };
  std::vector<nx::DType> carry, xs;
  std::vector<Node> nodes;
  std::vector<std::size_t> next, ys;  // value indices: the carry out, the ys
  std::vector<bool> bounded;          // per carry: its new value through sin (keeps it finite)

  // exact: only operations IEEE rounds exactly (no sin, exp, maximum), so
  // a plain C++ loop over floats and doubles gives the same bits (plain).
  explicit RandomStep(std::mt19937& rng, bool exact = false) {
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    const bool mixed = pick(3) == 0;
    const nx::DType main = pick(2) ? nx::float64 : nx::float32;
    auto type = [&] { return mixed ? (pick(2) ? nx::float64 : nx::float32) : main; };
    for (std::size_t k = 1 + pick(pick(4) == 0 ? 24 : 6); k-- > 0;) carry.push_back(type());
    for (std::size_t k = 1 + pick(3); k-- > 0;) xs.push_back(type());  // (rune::scan over xs needs one)
    const std::size_t inputs = carry.size() + xs.size();
    for (std::size_t k = 4 + pick(40); k-- > 0;) {
      const std::size_t values = inputs + nodes.size();
      const std::size_t roll = pick(20);
      Kind kind = roll < 12 ? Kind(roll % 5) : Kind(5 + roll % 8);
      if (exact && (kind == sin || kind == exp || kind == maximum)) kind = scale;
      nodes.push_back({kind, pick(values), pick(values), pick(6)});
    }
    const std::size_t values = inputs + nodes.size();
    for (std::size_t k = 0; k < carry.size(); ++k) {
      // (mostly a late value; sometimes a parameter: passed on or swapped)
      next.push_back(pick(5) == 0 ? pick(carry.size()) : values - 1 - pick(std::min<std::size_t>(values, 8)));
      bounded.push_back(!exact && pick(2) == 0);
    }
    for (std::size_t k = pick(3); k-- > 0;) ys.push_back(pick(values));
  }

  // Rows of xs: special values for half of the seeds.
  std::vector<Tensor> rows_of(std::mt19937& rng, std::uint32_t seed) const {
    std::vector<Tensor> out;
    for (nx::DType t : xs) {
      std::vector<double> row(rows);
      for (double& e : row) e = seed % 2 ? special(rng, t) : std::uniform_real_distribution<double>(-2, 2)(rng);
      out.push_back(nx::create(t, {rows}, row));
    }
    return out;
  }

  // The scan of an exact step over xs, run by a plain C++ loop: its carry
  // and its stacked ys, as rune::scan returns them.
  rune::vm::Values plain(const std::vector<Tensor>& init, const std::vector<Tensor>& rows_in) const {
    struct Value {  // a float (single) or a double
      bool single;
      double d;
    };
    const auto of = [](const Tensor& t) { return Value{t.dtype() == nx::float32, nx::item(t)}; };
    const auto as = [](Value v, bool single) { return Value{single, single ? double(float(v.d)) : v.d}; };
    std::vector<Value> c;
    for (const Tensor& t : init) c.push_back(of(t));
    std::vector<std::vector<double>> stacked(ys.size());
    std::vector<bool> single(ys.size());  // (a y's type, the same every row)
    for (std::int64_t r = 0; r < rows; ++r) {
      std::vector<Value> v = c;
      for (const Tensor& x : rows_in) v.push_back({x.dtype() == nx::float32, nx::item(x, {r})});
      for (const Node& n : nodes) {
        const Value a = v[n.a], b = as(v[n.b], a.single);
        // (each operation in the operands' type: float arithmetic for singles)
        const auto round = [&](auto f64_op, auto f32_op) {
          return a.single ? Value{true, double(f32_op(float(a.d), float(b.d)))} : Value{false, f64_op(a.d, b.d)};
        };
        const auto compared = [&](auto x, auto y) {
          const bool k[] = {x < y, x <= y, x > y, x >= y, x == y, x != y};
          return k[n.which];
        };
        switch (n.kind) {
          case add: v.push_back(round([](double x, double y) { return x + y; }, [](float x, float y) { return x + y; })); break;
          case sub: v.push_back(round([](double x, double y) { return x - y; }, [](float x, float y) { return x - y; })); break;
          case mul: v.push_back(round([](double x, double y) { return x * y; }, [](float x, float y) { return x * y; })); break;
          case div: v.push_back(round([](double x, double y) { return x / y; }, [](float x, float y) { return x / y; })); break;
          case neg: v.push_back({a.single, -a.d}); break;
          case choose:
            v.push_back((a.single ? compared(float(a.d), float(b.d)) : compared(a.d, b.d)) ? a : b);
            break;
          case cast: v.push_back(as(a, !a.single)); break;
          case scale:
            v.push_back(a.single ? Value{true, double(float(a.d) * 0.5f + 0.25f)} : Value{false, a.d * 0.5 + 0.25});
            break;
          case root: v.push_back(a.single ? Value{true, double(std::sqrt(float(a.d)))} : Value{false, std::sqrt(a.d)}); break;
          case magnitude: v.push_back({a.single, std::fabs(a.d)}); break;
          default: FAIL("not an exact operation");
        }
      }
      for (std::size_t k = 0; k < ys.size(); ++k) {
        stacked[k].push_back(v[ys[k]].d);
        single[k] = v[ys[k]].single;
      }
      for (std::size_t k = 0; k < carry.size(); ++k) c[k] = as(v[next[k]], carry[k] == nx::float32);
    }
    rune::vm::Values out;
    for (std::size_t k = 0; k < carry.size(); ++k) out.push_back(nx::scalar(carry[k], c[k].d));
    for (std::size_t k = 0; k < ys.size(); ++k)
      out.push_back(nx::create(single[k] ? nx::float32 : nx::float64, {rows}, stacked[k]));
    return out;
  }

  // A carry to start from: special values for a third of the seeds.
  std::vector<Tensor> initial(std::mt19937& rng, std::uint32_t seed) const {
    std::vector<Tensor> init;
    for (nx::DType t : carry) init.push_back(nx::scalar(t, seed % 3 == 0 ? special(rng, t) : 0.1 * double(init.size()) - 0.4));
    return init;
  }

  std::pair<std::vector<Tensor>, std::vector<Tensor>> operator()(const std::vector<Tensor>& c,
                                                                 const std::vector<Tensor>& x) const {
    std::vector<Tensor> v = c;
    v.insert(v.end(), x.begin(), x.end());
    for (const Node& n : nodes) {
      const Tensor& a = v[n.a];
      const Tensor b = nx::cast(v[n.b], a.dtype());
      switch (n.kind) {
        case add: v.push_back(a + b); break;
        case sub: v.push_back(a - b); break;
        case mul: v.push_back(a * b); break;
        case div: v.push_back(a / b); break;
        case neg: v.push_back(-a); break;
        case sin: v.push_back(nx::sin(a)); break;
        case exp: v.push_back(nx::exp(a)); break;
        case maximum: v.push_back(nx::maximum(a, b)); break;
        case choose: {
          const Tensor comparisons[] = {nx::less(a, b), nx::less_equal(a, b), nx::greater(a, b),
                                        nx::greater_equal(a, b), nx::equal(a, b), nx::not_equal(a, b)};
          v.push_back(nx::where(comparisons[n.which], a, b));
          break;
        }
        case cast: v.push_back(nx::cast(a, a.dtype() == nx::float64 ? nx::float32 : nx::float64)); break;
        case scale: v.push_back(a * 0.5 + 0.25); break;
        case root: v.push_back(nx::sqrt(a)); break;
        case magnitude: v.push_back(nx::abs(a)); break;
      }
    }
    std::vector<Tensor> out, ys_out;
    for (std::size_t k = 0; k < carry.size(); ++k) {
      const Tensor value = nx::cast(v[next[k]], carry[k]);
      out.push_back(bounded[k] ? nx::sin(value) : value);
    }
    for (std::size_t k : ys) ys_out.push_back(v[k]);
    return {out, ys_out};
  }
};

}  // namespace

TEST_CASE("a Lorenz step promoted to machine code gives the plain C++ loop's bits") {
  using Three = std::tuple<Tensor, Tensor, Tensor>;
  auto lorenz = [](const Three& s) {
    auto step = [](const Three& c) {
      const auto& [x, y, z] = c;
      Tensor dx = 10. * (y - x), dy = x * (28. - z) - y, dz = x * y - (8. / 3.) * z;
      return std::pair{Three{x + 0.01 * dx, y + 0.01 * dy, z + 0.01 * dz}, std::tuple<>{}};
    };
    return rune::scan(step, s, rows).first;
  };
  auto f = rune::jit(lorenz);
  const Three first = f(Three{f64(1), f64(1), f64(1)}), second = f(first);  // (the second call promoted)
  double x = 1, y = 1, z = 1;
  for (int k = 0; k < 2 * rows; ++k) {
    const double dx = 10. * (y - x), dy = x * (28. - z) - y, dz = x * y - (8. / 3.) * z;
    x = x + 0.01 * dx, y = y + 0.01 * dy, z = z + 0.01 * dz;
  }
  CHECK(test::same_bits(std::get<0>(second), f64(x)));
  CHECK(test::same_bits(std::get<1>(second), f64(y)));
  CHECK(test::same_bits(std::get<2>(second), f64(z)));
}

TEST_CASE("random scalar steps give the VM's and the reference interpreter's bits as machine code") {
  for (std::uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    const RandomStep step(rng);
    const std::vector<Tensor> init = step.initial(rng, seed), xs = step.rows_of(rng, seed);
    INFO("seed " << seed << ": " << step.carry.size() << " carries, " << step.nodes.size() << " values");
    const ScanCase c(step, init, xs);
    on_vm_then_native(*c.code, c.args);
  }
}

// The outside oracle: steps of IEEE-exact operations give, as machine code,
// what a plain C++ loop over floats and doubles gives.
TEST_CASE("random exact scalar steps as machine code give a plain C++ loop's bits") {
  for (std::uint32_t seed = 1; seed <= 80; ++seed) {
    std::mt19937 rng(seed);
    const RandomStep step(rng, true);
    const std::vector<Tensor> init = step.initial(rng, seed), xs = step.rows_of(rng, seed);
    INFO("seed " << seed << ": " << step.carry.size() << " carries, " << step.nodes.size() << " values");
    const ScanCase c(step, init, xs);
    for (int run = 0; run < 2; ++run) (void)rune::vm::run(*c.code, c.args);  // (the third run promoted)
    const rune::vm::Values got = rune::vm::run(*c.code, c.args);
    CHECK(scan_promoted(*c.code) == (native::mode() != Mode::off && native::built()));
    test::same_results(got, step.plain(init, xs));
  }
}

TEST_CASE("carries that swap, pass on, count in integers or flip booleans move at once as machine code") {
  using Tensors = std::vector<Tensor>;
  // a, b, c float64 in a cycle; d passed on; e float32 swapped with f; n an
  // int32 count; flag a bool flipped each row; g a constant.
  auto step = [](const Tensors& c, const Tensors& x) {
    return std::pair{Tensors{c[1], c[2], c[0] + x[0], c[3], c[5], c[4] * 0.5, c[6] + 1, nx::logical_not(c[7]),
                             nx::scalar(nx::float64, 2.)},
                     Tensors{c[0], x[0], c[6]}};
  };
  const Tensors init{f64(1.), f64(-0.), f64(std::nan("")), f64(4e-310), nx::scalar(nx::float32, 1e-39),
                     nx::scalar(nx::float32, -3.), nx::scalar(nx::int32, 0), nx::scalar(nx::bool_, 1), f64(7.)};
  const Tensor xs = nx::linspace(nx::float64, -1., 1., rows);
  const ScanCase c(step, init, Tensors{xs});
  on_vm_then_native(*c.code, c.args);
}

TEST_CASE("more live values than xmm registers are written home and read back") {
  using Tensors = std::vector<Tensor>;
  constexpr std::size_t n = 40;  // (15 xmm registers hold values)
  auto step = [](const Tensors& c, const Tensors& x) {
    Tensors next;
    for (std::size_t k = 0; k < n; ++k) next.push_back(c[k] * 0.5 + c[(k + 7) % n] * 0.25 + x[0]);
    // (each new value read after all of them are computed: every one is live at once)
    Tensor total = next[0];
    for (std::size_t k = 1; k < n; ++k) total = total + next[k];
    for (std::size_t k = 0; k < n; ++k) next[k] = next[k] - total * 1e-3;
    return std::pair{next, Tensors{total}};
  };
  Tensors init;
  for (std::size_t k = 0; k < n; ++k) init.push_back(f64(double(k) - 20.));
  const ScanCase c(step, init, Tensors{nx::linspace(nx::float64, 0., 1., rows)});
  on_vm_then_native(*c.code, c.args);
}

TEST_CASE("a step of more scalars than the AArch64 emitter's offsets reach stays on the VM there") {
  using Tensors = std::vector<Tensor>;
  auto step = [](const Tensors& c, const Tensors& x) {
    Tensor v = c[0];
    for (int k = 0; k < 300; ++k) v = v * 0.5 + x[0];  // (some 600 scalar registers)
    return std::pair{Tensors{v}, Tensors{}};
  };
  const ScanCase c(step, Tensors{f64(0.25)}, Tensors{nx::linspace(nx::float64, 0., 1., rows)});
  REQUIRE(c.code->scans[0].step->scalar_types.size() > 512);
#if defined(__aarch64__)
  on_vm_then_native(*c.code, c.args, false);
  const rune::vm::Instruction* culprit = nullptr;
  const char* why = native::scan_refusal(c.code->scans[0], culprit);
  if (native::built()) CHECK(std::string(why) == "its frames hold more than 512 scalars (beyond the AArch64 emitter's offsets)");
  CHECK(native::scan_listing(c.code->scans[0]).empty());
#else
  on_vm_then_native(*c.code, c.args);
#endif
}

TEST_CASE("rows read from strided views and ys of every width are where the VM puts them") {
  using Tensors = std::vector<Tensor>;
  auto step = [](const Tensors& c, const Tensors& x) {
    const Tensor next = c[0] + nx::cast(x[0], nx::float64) * nx::cast(x[1], nx::float64);
    return std::pair{Tensors{next}, Tensors{next, nx::cast(next, nx::float32), nx::greater(next, 0.), x[1]}};
  };
  const Tensor wide = nx::linspace(nx::float32, -3., 3., 2 * rows + 1);
  const Tensor strided = nx::slice(wide, {1}, {2 * rows + 1}, {2});  // every other element
  const Tensor counts = nx::cast(nx::linspace(nx::float64, 0., 9., rows), nx::int64);
  const ScanCase c(step, Tensors{f64(0.)}, Tensors{strided, counts});
  on_vm_then_native(*c.code, c.args);
}

TEST_CASE("a step holding tensors stays on the VM") {
  using Tensors = std::vector<Tensor>;
  auto step = [](const Tensors& c, const Tensors& x) { return std::pair{Tensors{c[0] * 0.5 + x[0]}, Tensors{}}; };
  const ScanCase c(step, Tensors{nx::zeros(nx::float64, {4})}, Tensors{nx::ones(nx::float64, {rows, 4})});
  on_vm_then_native(*c.code, c.args, false);
}

TEST_CASE("the listing of a promoted step shows each instruction above its machine code") {
  using Tensors = std::vector<Tensor>;
  auto step = [](const Tensors& c, const Tensors& x) { return std::pair{Tensors{-(c[0] * x[0]) + nx::exp(c[0])}, Tensors{}}; };
  const ScanCase c(step, Tensors{f64(0.5)}, Tensors{nx::linspace(nx::float64, 0., 1., rows)});
  const std::string text = native::scan_listing(c.code->scans[0]);
  if (!native::built()) {
    CHECK(text.empty());
    return;
  }
  INFO(text);
#if defined(__aarch64__)
  const char *multiply = "fmul", *negate = "fneg", *call = "blr x16";
#else
  const char *multiply = "mulsd", *negate = "xorpd", *call = "call rax";
#endif
  CHECK(text.find("; mul_f64") != std::string::npos);
  CHECK(text.find(multiply) != std::string::npos);
  CHECK(text.find("; neg_f64") != std::string::npos);
  CHECK(text.find(negate) != std::string::npos);
  CHECK(text.find("; unary") != std::string::npos);
  CHECK(text.find(call) != std::string::npos);
}

// An iterate of f on the carry for `trips` trips (an int32 count in the
// carry's last place), compiled as rune::jit compiles it.
template <class Step>
std::shared_ptr<const rune::vm::Code> iterated(Step step, const std::vector<Tensor>& init, std::int64_t trips,
                                               std::int64_t max = 1000000) {
  auto f = [step, trips, max](const std::vector<Tensor>& c) {
    auto until = [trips](const std::vector<Tensor>& v) { return nx::greater_equal(v.back(), double(trips)); };
    auto next = [step](const std::vector<Tensor>& v) {
      std::vector<Tensor> out = step(std::vector<Tensor>(v.begin(), v.end() - 1));
      out.push_back(v.back() + 1);
      return out;
    };
    return rune::iterate(max, until, next, c);
  };
  std::vector<Tensor> with_count = init;
  with_count.push_back(nx::scalar(nx::int32, 0));
  return rune::vm::compile(
      std::make_shared<const rune::ir::Program>(rune::ir::simplify(rune::program(f, with_count).ir())));
}

std::vector<Tensor> counted(std::vector<Tensor> init) {
  init.push_back(nx::scalar(nx::int32, 0));
  return init;
}

TEST_CASE("an iterate of scalars promoted to machine code gives the VM's bits") {
  using Tensors = std::vector<Tensor>;
  // (x, y): a slowly converging mix, a float32 beside, a select
  auto step = [](const Tensors& c) {
    const Tensor x = c[0] * 0.999 + 0.001 * c[1];
    return Tensors{x, nx::where(nx::less(x, c[1]), c[1], x * 0.5), nx::cast(x, nx::float32) * c[2]};
  };
  const Tensors init{f64(1.), f64(3.), nx::scalar(nx::float32, 1.0001)};
  const auto code = iterated(step, init, rows);
  on_vm_then_native(*code, counted(init), true, iterate_promoted);
}

TEST_CASE("random iterate steps give the VM's bits as machine code") {
  for (std::uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const RandomStep random(rng);
    const std::vector<Tensor> init = random.initial(rng, seed);
    std::vector<Tensor> captured;
    for (nx::DType t : random.xs) captured.push_back(nx::scalar(t, seed % 2 ? special(rng, t) : 0.75));
    auto step = [random, captured](const std::vector<Tensor>& c) { return random(c, captured).first; };
    INFO("seed " << seed << ": " << random.carry.size() << " carries, " << random.nodes.size() << " values");
    const auto code = iterated(step, init, rows);
    on_vm_then_native(*code, counted(init), true, iterate_promoted);
  }
}

TEST_CASE("a promoted iterate that runs past its most steps raises the VM's error") {
  using Tensors = std::vector<Tensor>;
  auto step = [](const Tensors& c) { return Tensors{c[0] * 0.5}; };
  const auto code = iterated(step, Tensors{f64(1.)}, 1000000, rows);  // (stops after 1,000,000 trips: never)
  const std::vector<Tensor> args = counted({f64(1.)});
  std::string first;
  for (int run = 0; run < 3; ++run) {
    try {
      (void)rune::vm::run(*code, args);
      FAIL("the iterate stopped");
    } catch (const std::invalid_argument& e) {
      if (run == 0) first = e.what();
      CHECK(std::string(e.what()) == first);
    }
  }
  CHECK(first.find("rune::iterate") == 0);
  CHECK(iterate_promoted(*code) == (native::mode() != Mode::off && native::built()));
}

TEST_CASE("rune::JitOptions::native_after sets the rows after which a function's scans are promoted") {
  if (native::mode() != Mode::on || !native::built()) return;  // (RUNE_NATIVE=off or eager overrides it)
  auto decay = [](const Tensor& x) {
    return rune::scan([](const Tensor& c) { return std::pair{c * 0.5 + 1., std::tuple<>{}}; }, x, 10).first;
  };
  const Tensor x = f64(3.);
  auto at_once = rune::jit(decay, {.native_after = 0});
  CHECK(test::promotions([&] { (void)at_once(x); }).find("promoted after 10 rows") != std::string::npos);
  auto never_promoted = rune::jit(decay, {.native_after = -1});
  CHECK(test::promotions([&] { for (int k = 0; k < 200; ++k) (void)never_promoted(x); }).empty());
  auto after_30 = rune::jit(decay, {.native_after = 30});
  CHECK(test::promotions([&] { (void)after_30(x), (void)after_30(x); }).empty());
  CHECK(test::promotions([&] { (void)after_30(x); }).find("promoted after 30 rows") != std::string::npos);
  CHECK(test::same_bits(at_once(x), decay(x)));
  CHECK(test::same_bits(after_30(x), decay(x)));
}

TEST_CASE("an eager scan's rows count over its calls: called again, it is promoted, then runs its machine code") {
  if (native::mode() != Mode::on || !native::built()) return;  // (RUNE_NATIVE=off or eager overrides it)
  auto decay = [](const Tensor& x) {  // (a step of its own: no other test has run this program)
    return rune::scan([](const Tensor& c) { return std::pair{c * 0.25 + 3., std::tuple<>{}}; }, x, 600).first;
  };
  const Tensor x = f64(3.);
  CHECK(test::promotions([&] { (void)decay(x); }).empty());
  CHECK(test::promotions([&] { (void)decay(x); }).find("promoted after 1200 rows") != std::string::npos);
  CHECK(test::promotions([&] { (void)decay(x); }).empty());  // (already promoted)
  const Tensor plain = [] {
    double c = 3.;
    for (int k = 0; k < 600; ++k) c = c * 0.25 + 3.;
    return f64(c);
  }();
  CHECK(test::same_bits(decay(x), plain));
}

TEST_CASE("integer arithmetic and comparisons, and boolean logic, inline give the row loops' bits") {
  using Tensors = std::vector<Tensor>;
  // counters of every word type, wrapping past their limits; their
  // comparisons signed and unsigned; booleans combined
  auto step = [](const Tensors& c, const Tensors& x) {
    Tensors next{c[0] + 1, c[1] * 3 - nx::cast(c[0], nx::int64), c[2] + c[2], c[3] - 7, nx::logical_xor(c[4], nx::less(nx::cast(c[0], nx::int64), c[1])),
                 nx::logical_or(nx::logical_and(c[5], nx::greater_equal(nx::cast(c[2], nx::uint64), c[3])),
                                nx::equal(c[1], x[0]))};
    const Tensor wide = nx::cast(c[2], nx::uint64);
    Tensors ys{nx::less_equal(c[0], nx::scalar(nx::int32, 5.)), nx::not_equal(wide, c[3]), nx::greater(c[3], wide),
               nx::less(c[1], x[0])};
    return std::pair{next, ys};
  };
  const Tensors init{nx::scalar(nx::int32, 2147483000.), nx::scalar(nx::int64, -5.), nx::scalar(nx::uint32, 4294967000.),
                     nx::scalar(nx::uint64, 3.), nx::scalar(nx::bool_, 1.), nx::scalar(nx::bool_, 0.)};
  const Tensor xs = nx::cast(nx::linspace(nx::float64, -300., 300., rows), nx::int64);
  const ScanCase c(step, init, Tensors{xs});
  on_vm_then_native(*c.code, c.args);
  const std::string text = native::scan_listing(c.code->scans[0]);
  INFO(text);
  // (nothing calls out but the casts between integer types)
  if (native::built()) CHECK(text.find("; the row loop of add") == std::string::npos);
}
