// The machine-code tier's fused kernels (vm/native/fused_loop.cpp): a kernel in
// rows of two float64 or four float32 (a cloth's springs: gathers by index,
// short rows reduced, per-row values, scatters) promoted to machine code
// gives the VM's bits (NaN payloads aside) and the reference interpreter's,
// whatever its values and indices; a plain C++ loop is the oracle of one
// spring kernel; the kernels it leaves on the VM say why.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "helpers.hpp"
#include "ir/eval.hpp"
#include "ir/passes/pipeline.hpp"
#include "ops/kernels/f32_constants.hpp"
#include "ops/kernels/kernels.hpp"
#include "vm/compile.hpp"
#include "vm/kernel_memory.hpp"
#include "vm/listing.hpp"
#include "vm/machine.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using rune::vm::native::Mode;
namespace native = rune::vm::native;

namespace {

// f's program as rune::jit compiles it (simplified), twice: every unit left
// on the VM, and every unit promoted at once.
template <class F, class... Args> std::pair<std::shared_ptr<const rune::vm::Code>, std::shared_ptr<const rune::vm::Code>>
both_codes(F f, const Args&... args) {
  auto compiled = [&] {
    return rune::vm::compile(
        std::make_shared<const rune::ir::Program>(rune::ir::simplify(rune::program(f, args...).ir())));
  };
  auto on_vm = compiled(), promoted = compiled();
  native::promote_after(*on_vm, -1);
  native::promote_after(*promoted, 0);
  return {on_vm, promoted};
}

std::size_t promoted_kernels(const rune::vm::Code& code) {
  std::size_t n = 0;
  for (const rune::vm::FusedKernel& m : code.kernels) n += m.native->promoted();
  return n;
}

// Runs f's kernels on the VM and as machine code (twice: the loop is
// reused), against each other and the reference interpreter; returns how
// many kernels were promoted.
template <class F, class... Args> std::size_t vm_and_native_agree(F f, const Args&... arguments) {
  const std::vector<Tensor> args{arguments...};
  const auto [on_vm, promoted] = both_codes(f, arguments...);
  const std::vector<Tensor> evaluated = rune::ir::evaluate(*on_vm->program, args);
  const rune::vm::Values reference(evaluated.begin(), evaluated.end()), vm = rune::vm::run(*on_vm, args);
  test::same_results(vm, reference);
  for (int again = 0; again < 2; ++again) test::same_results(rune::vm::run(*promoted, args), vm);
  if (native::mode() == Mode::on) CHECK(promoted_kernels(*on_vm) == 0);  // (eager promotes both)
  return promoted_kernels(*promoted);
}

bool promotes() { return native::fuses() && native::mode() != Mode::off; }

// Whether block loops compute float32 exp and tanh in registers: where the
// row loops compute them in batches (RUNE_SIMD=portable's call the C
// library).
bool exp_in_registers() {
  return native::fuses() && std::string_view(nx::ops::kernels::table().arch) != "generic";
}

// Values IEEE arithmetic treats apart, and ordinary ones.
double value(std::mt19937& rng, bool special) {
  const double inf = std::numeric_limits<double>::infinity();
  const double pool[] = {0., -0., 4e-310, -3e-39, inf, -inf, std::nan(""), 1.5, -2.25, 3e5, 1e-3};
  if (special && std::uniform_int_distribution<int>(0, 2)(rng) == 0)
    return pool[std::uniform_int_distribution<std::size_t>(0, std::size(pool) - 1)(rng)];
  return std::uniform_real_distribution<double>(-2, 2)(rng);
}

// A random kernel over springs between the rows of x ([n, 2] float64 or
// [n, 4] float32), by indices a and b (in range, or negative and past the
// end): the difference of the rows they name, then random steps on whole
// rows (with a scalar, a per-spring weight, the row's length or product,
// negation, abs, sqrt), per-row steps (a select on a comparison, exp:
// a call-out), and as results the rows, their sums, their segment sums
// by a (dropped where a is out of range) and x with them added at b.
struct RandomKernel {
  enum Kind { plus_scalar, times_weight, unit, minus_product, negate, magnitude, root, choose, grow, twice };
  nx::DType type = nx::float64;
  std::int64_t row = 2, n = 7, springs = 40;
  std::vector<Kind> steps;

  explicit RandomKernel(std::mt19937& rng) {
    auto pick = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng); };
    if (pick(2)) type = nx::float32, row = 4;
    for (int k = 1 + pick(8); k-- > 0;) steps.push_back(Kind(pick(10)));
  }

  std::tuple<Tensor, Tensor, Tensor, Tensor> operator()(const Tensor& x, const Tensor& a, const Tensor& b,
                                                        const Tensor& w, const Tensor& s) const {
    Tensor v = nx::take(x, b, 0) - nx::take(x, a, 0);
    for (Kind k : steps) {
      switch (k) {
        case plus_scalar: v = v + s; break;
        case times_weight: v = v * w; break;
        case unit: v = v / nx::sqrt(nx::sum(v * v, {1}, true)); break;
        case minus_product: v = v - nx::prod(v, {1}, true); break;
        case negate: v = -v; break;
        case magnitude: v = nx::abs(v); break;
        case root: v = nx::sqrt(nx::abs(v)); break;
        case choose: {
          const Tensor r = nx::sum(v, {1}, true);
          v = v * nx::where(nx::less(r, 0.), -r, r * 2.);
          break;
        }
        case grow: v = v + nx::exp(nx::sum(v, {1}, true) * 0.01); break;
        case twice: v = v * 2. - v / 3.; break;
      }
    }
    return {v, nx::sum(v, {1}, true), nx::segment_sum(v, a, n), nx::scatter_add(x, b, v)};
  }

  std::vector<Tensor> arguments(std::mt19937& rng, bool special, bool wild, nx::DType index) const {
    std::vector<double> x(static_cast<std::size_t>(n * row)), w(static_cast<std::size_t>(springs));
    for (double& e : x) e = value(rng, special);
    for (double& e : w) e = value(rng, special);
    std::vector<double> a(static_cast<std::size_t>(springs)), b(static_cast<std::size_t>(springs));
    auto index_value = [&] {
      return double(wild ? std::uniform_int_distribution<std::int64_t>(-2 * n, 2 * n)(rng)
                         : std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng));
    };
    for (double& e : a) e = index_value();
    for (double& e : b) e = index_value();
    return {nx::create(type, {n, row}, x), nx::create(index, {springs}, a), nx::create(index, {springs}, b),
            nx::create(type, {springs, 1}, w), nx::scalar(type, value(rng, special))};
  }
};

}  // namespace

TEST_CASE("random kernels over springs give the VM's and the reference interpreter's bits as machine code") {
  std::size_t promoted = 0;
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    std::mt19937 rng(seed);
    const RandomKernel kernel(rng);
    const std::vector<Tensor> args = kernel.arguments(rng, seed % 2 == 0, seed % 3 == 0, seed % 4 ? nx::int32 : nx::int64);
    INFO("seed " << seed << ": " << nx::name(kernel.type) << ", " << kernel.steps.size() << " steps");
    auto f = [&](const Tensor& x, const Tensor& a, const Tensor& b, const Tensor& w, const Tensor& s) {
      return kernel(x, a, b, w, s);
    };
    promoted += vm_and_native_agree(f, args[0], args[1], args[2], args[3], args[4]);
  }
  if (promotes()) CHECK(promoted >= 120);  // (each case's spring kernel at least)
}

// The outside oracle: the cloth's spring forces by a plain C++ loop, in the
// operations' order (a row's sum as the eager loop of short rows adds it:
// (0 + x) + (0 + y)), bit for bit as machine code.
TEST_CASE("a spring kernel as machine code gives a plain C++ loop's bits") {
  const std::size_t n = 12, springs = 30;
  std::mt19937 rng(7);
  std::vector<double> pos(2 * n), vel(2 * n), rest(springs);
  for (double& e : pos) e = std::uniform_real_distribution<double>(-1, 1)(rng);
  for (double& e : vel) e = std::uniform_real_distribution<double>(-1, 1)(rng);
  for (double& e : rest) e = std::uniform_real_distribution<double>(0.1, 0.5)(rng);
  std::vector<double> a(springs), b(springs);
  for (std::size_t s = 0; s < springs; ++s) a[s] = double(s % n), b[s] = double((s * 5 + 1) % n);
  const double k = 1e4, c = 5.;
  std::vector<double> force(2 * n, 0.);
  for (std::size_t s = 0; s < springs; ++s) {
    const std::size_t ia = std::size_t(a[s]), ib = std::size_t(b[s]);
    const double dx = pos[2 * ib] - pos[2 * ia], dy = pos[2 * ib + 1] - pos[2 * ia + 1];
    const double len = std::sqrt((0. + dx * dx) + (0. + dy * dy));
    const double ux = dx / len, uy = dy / len;
    const double rx = vel[2 * ib] - vel[2 * ia], ry = vel[2 * ib + 1] - vel[2 * ia + 1];
    const double rel = (0. + rx * ux) + (0. + ry * uy);
    const double f = k * (len - rest[s]) + c * rel;
    force[2 * ia] += f * ux, force[2 * ia + 1] += f * uy;
  }
  auto spring_forces = [&](const Tensor& p, const Tensor& v, const Tensor& ta, const Tensor& tb, const Tensor& r) {
    const Tensor d = nx::take(p, tb, 0) - nx::take(p, ta, 0);
    const Tensor len = nx::sqrt(nx::sum(d * d, {1}, true));
    const Tensor dir = d / len;
    const Tensor rel = nx::sum((nx::take(v, tb, 0) - nx::take(v, ta, 0)) * dir, {1}, true);
    return nx::segment_sum((k * (len - r) + c * rel) * dir, ta, n);
  };
  const std::vector<Tensor> args{nx::create(nx::float64, {n, 2}, pos), nx::create(nx::float64, {n, 2}, vel),
                                 nx::create(nx::int32, {springs}, a), nx::create(nx::int32, {springs}, b),
                                 nx::create(nx::float64, {springs, 1}, rest)};
  const auto [on_vm, promoted] = both_codes(spring_forces, args[0], args[1], args[2], args[3], args[4]);
  const rune::vm::Values got = rune::vm::run(*promoted, args);
  CHECK(test::bits_equal(nx::to_vector<double>(got[0]), force));
  CHECK(promoted_kernels(*promoted) == (promotes() ? 1u : 0u));
}

TEST_CASE("kernels the machine-code tier leaves on the VM say why") {
  if (!native::fuses()) return;
  const Tensor x = nx::reshape(nx::linspace(nx::float64, -1., 1., 12), {4, 3}), y = nx::linspace(nx::float64, 0., 1., 8);
  const Tensor p = nx::reshape(nx::linspace(nx::float64, -1., 1., 8), {4, 2});
  const Tensor i = nx::create(nx::int32, {5}, {0, 3, 1, 1, 2}), j = nx::create(nx::int32, {5}, {2, 2, 0, 3, 1});
  auto why = [](const auto& f, const auto&... args) {
    const auto [on_vm, promoted] = both_codes(f, args...);
    INFO(rune::vm::listing(*promoted));
    REQUIRE(!promoted->kernels.empty());
    return std::string(native::fused_refusal(promoted->kernels[0]));
  };
  auto difference = [](const Tensor& v, const Tensor& from, const Tensor& to) {
    return nx::tanh(nx::take(v, to, 0) - nx::take(v, from, 0));
  };
  const std::string no_run = "no two of its steps in a row are + - * /, negation, sqrt or abs of one float type";
  const bool exp_inline = exp_in_registers();
  const auto exp_twice = [](const Tensor& v) { return nx::exp(v) * 2.; };
  CHECK(why(exp_twice, y) == no_run + (exp_inline ? " (or float32 exp or tanh)" : ""));
  const auto [f32_on_vm, f32_promoted] = both_codes(exp_twice, nx::cast(y, nx::float32));
  const char* f32_why = native::fused_refusal(f32_promoted->kernels.at(0));
  CHECK(std::string(f32_why ? f32_why : "") == (exp_inline ? "" : no_run));
  CHECK(why(difference, x, i, j) == "it reads rows other than two float64 or four float32");
  CHECK(why([](const Tensor& v) { return nx::sum(v * v); }, y) ==
        "it reduces whole values (the VM folds them block by block)");
  CHECK(why(difference, p, i, j) == "a step on whole rows the tier does not emit packed");
}

TEST_CASE("rune::JitOptions::native_after 0 promotes a function's fused kernels at once") {
  if (native::mode() != Mode::on || !native::fuses()) return;  // (RUNE_NATIVE=off or eager overrides it)
  const Tensor p = nx::reshape(nx::linspace(nx::float64, -1., 1., 8), {4, 2});
  const Tensor i = nx::create(nx::int32, {5}, {0, 3, 1, 1, 2}), j = nx::create(nx::int32, {5}, {2, 2, 0, 3, 1});
  auto differences = [](const Tensor& v, const Tensor& from, const Tensor& to) {
    return (nx::take(v, to, 0) - nx::take(v, from, 0)) * 2.;
  };
  auto at_once = rune::jit(differences, {.native_after = 0});
  CHECK(test::promotions([&] { (void)at_once(p, i, j); }).find("a fused kernel promoted after 10 elements") !=
        std::string::npos);
  auto by_default = rune::jit(differences);  // (2^17 elements: thousands of calls)
  CHECK(test::promotions([&] { for (int k = 0; k < 100; ++k) (void)by_default(p, i, j); }).empty());
  CHECK(test::same_bits(at_once(p, i, j), differences(p, i, j)));
}

TEST_CASE("a kernel in rows of more scalars than the AArch64 emitter's offsets reach stays on the VM there") {
  auto f = [](const Tensor& x, const Tensor& w) {
    Tensor v = x - nx::sum(x, {1}, true);
    for (int k = 0; k < 150; ++k) v = v * 0.5 + w;  // (some 600 scalars a row: a packed row takes two)
    return v;
  };
  const Tensor x = nx::reshape(nx::linspace(nx::float64, -1., 1., 8), {4, 2});
  const Tensor w = nx::reshape(nx::linspace(nx::float64, 0., 1., 8), {4, 2});
  const std::size_t promoted = vm_and_native_agree(f, x, w);
  const auto [on_vm, code] = both_codes(f, x, w);
  REQUIRE(code->kernels.size() == 1);
#if defined(__aarch64__)
  CHECK(promoted == 0);
  if (native::built())
    CHECK(std::string(native::fused_refusal(code->kernels[0])) ==
          "its frames hold more than 512 scalars (beyond the AArch64 emitter's offsets)");
  CHECK(native::fused_listing(code->kernels[0]).empty());
#else
  CHECK(promoted == (promotes() ? 1u : 0u));
#endif
}

namespace {

// A random elementwise kernel (not in rows) over n elements: values from x
// and y, a scalar s and a one-element tensor e, combined by steps the tier
// computes in vector registers (+ - * /, negation, abs, sqrt) and steps it
// calls out for (exp, tanh, a select on a comparison), in random order and
// number: results the last value and some earlier ones.
struct RandomBlocks {
  nx::DType type = nx::float32;
  std::int64_t n = 1;
  struct Op {
    int kind, a, b;
  };
  std::vector<Op> ops;

  RandomBlocks(std::mt19937& rng, std::int64_t size) : n(size) {
    auto pick = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng); };
    if (pick(2)) type = nx::float64;
    for (int k = 2 + pick(24); k-- > 0;) {
      const int values = 4 + int(ops.size());
      ops.push_back({pick(10), pick(values), pick(values)});
    }
  }

  std::vector<Tensor> operator()(const Tensor& x, const Tensor& y, const Tensor& s, const Tensor& e) const {
    std::vector<Tensor> v{x, y, s, e};
    for (const Op& op : ops) {
      const Tensor& a = v[std::size_t(op.a)];
      const Tensor& b = v[std::size_t(op.b)];
      switch (op.kind) {
        case 0: v.push_back(a + b); break;
        case 1: v.push_back(a - b); break;
        case 2: v.push_back(a * b); break;
        case 3: v.push_back(a / b); break;
        case 4: v.push_back(-a); break;
        case 5: v.push_back(nx::abs(a)); break;
        case 6: v.push_back(nx::sqrt(a)); break;
        case 7: v.push_back(nx::exp(a)); break;
        case 8: v.push_back(nx::tanh(a)); break;
        default: v.push_back(nx::where(nx::less(a, b), a, b * 0.5)); break;
      }
    }
    // (every value of the kernel's shape: one element broadcast to it)
    return {v.back() + x * 0., v[v.size() / 2] + y * 0., v[4] + x * 0.};
  }

  std::vector<Tensor> arguments(std::mt19937& rng, bool special) const {
    std::vector<double> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
    for (double& v : x) v = value(rng, special);
    for (double& v : y) v = value(rng, special);
    return {nx::create(type, {n}, x), nx::create(type, {n}, y), nx::scalar(type, value(rng, special)),
            nx::create(type, {1}, {value(rng, special)})};
  }
};

}  // namespace

TEST_CASE("random elementwise kernels give the VM's and the reference interpreter's bits as machine code") {
  const std::int64_t sizes[] = {1, 3, 8, 15, 16, 17, 33, 1023, 1024, 1025, 3001, 70001};
  std::size_t promoted = 0;
  for (std::uint32_t seed = 1; seed <= 96; ++seed) {
    std::mt19937 rng(seed);
    const RandomBlocks kernel(rng, sizes[seed % std::size(sizes)]);
    const std::vector<Tensor> args = kernel.arguments(rng, seed % 2 == 0);
    INFO("seed " << seed << ": " << nx::name(kernel.type) << " [" << kernel.n << "], " << kernel.ops.size() << " steps");
    auto f = [&](const Tensor& x, const Tensor& y, const Tensor& s, const Tensor& e) { return kernel(x, y, s, e); };
    promoted += vm_and_native_agree(f, args[0], args[1], args[2], args[3]);
  }
  if (promotes()) CHECK(promoted > 48);
}

TEST_CASE("an elementwise kernel writing past the caches gives the VM's bits as machine code") {
  const std::size_t threshold = rune::vm::streaming_threshold();
  if (threshold > (std::size_t(64) << 20)) {
    WARN("this machine's caches stream only results past 64 MiB: not tried");
    return;
  }
  const std::int64_t n = std::int64_t(threshold / 4) + 1000;  // (float32: its result streamed, with a tail)
  auto chain = [](const Tensor& v) { return nx::tanh(v * 2. + 1.) * v - nx::exp(-v * v); };
  const Tensor x = nx::linspace(nx::float32, -3., 3., n);
  const std::size_t promoted = vm_and_native_agree(chain, x);
  const auto [on_vm, code] = both_codes(chain, x);
  REQUIRE(code->kernels.size() == 1);
  CHECK(promoted == (promotes() ? 1u : 0u));
#if defined(__x86_64__)  // (AArch64's row loops store through the caches)
  const bool streamed = std::ranges::count(code->kernels[0].streamed, true) > 0;  // (not by the portable loops)
  if (native::built() && streamed) CHECK(native::fused_listing(code->kernels[0]).find("movntp") != std::string::npos);
#endif
}

// The outside oracle of a block loop: a plain C++ loop over the elements in
// the operations' order (float32, no FMA: -ffp-contract=off is the
// project's), bit for bit, tails and a scalar included.
TEST_CASE("an elementwise kernel as machine code gives a plain C++ loop's bits") {
  const std::int64_t n = 3001;
  std::mt19937 rng(11);
  std::vector<double> xs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
  for (double& v : xs) v = float(value(rng, true));
  for (double& v : ys) v = float(value(rng, true));
  const float s = 0.75f;
  std::vector<float> want(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float x = float(xs[i]), y = float(ys[i]);
    const float a = (x * y - x) / y, b = std::sqrt(std::fabs(x)) * s;
    want[i] = a + b - -y;
  }
  auto f = [](const Tensor& x, const Tensor& y, const Tensor& k) {
    return (x * y - x) / y + nx::sqrt(nx::abs(x)) * k - -y;
  };
  const std::vector<Tensor> args{nx::create(nx::float32, {n}, xs), nx::create(nx::float32, {n}, ys),
                                 nx::scalar(nx::float32, double(s))};
  const auto [on_vm, promoted] = both_codes(f, args[0], args[1], args[2]);
  const std::vector<float> got = nx::to_vector<float>(rune::vm::run(*promoted, args)[0]);
  CHECK(test::bits_equal(got, want));
  CHECK(promoted_kernels(*promoted) == (promotes() ? 1u : 0u));
}

namespace {

// The distance of a float from a double reference in floats between them
// (the reference rounded to float first).
std::int64_t float_steps(float got, double want) {
  const auto ordered = [](float v) {
    const std::int32_t bits = std::bit_cast<std::int32_t>(v);
    return bits < 0 ? std::int64_t(std::numeric_limits<std::int32_t>::min()) - bits : std::int64_t(bits);
  };
  return std::abs(ordered(got) - ordered(float(want)));
}

}  // namespace

// float32 exp and tanh computed in a block loop's registers (the row loops'
// batch code emitted instruction for instruction; exp's lanes outside its
// range by its row loop, out of line): the VM's bits over a sweep of every
// 65521st float (both signs, subnormals, infinities, NaNs) and the edges of
// exp's range and of tanh's clamp; and, against the C library in double
// precision (the outside oracle), within docs/accuracy.md's bounds: exp
// within 1.08 ulps, tanh within 2.52 (so 1 and 3 floats from the rounded
// reference).
TEST_CASE("float32 exp and tanh in a block loop give the VM's bits and C's values within their ulps") {
  namespace f32 = nx::ops::kernels::f32;
  std::vector<float> xs;
  for (std::uint64_t bits = 0; bits < (std::uint64_t(1) << 32); bits += 65521)
    xs.push_back(std::bit_cast<float>(std::uint32_t(bits)));
  for (float edge : {f32::exp_lowest, f32::exp_highest, f32::tanh_clamp / 2, -f32::tanh_clamp / 2, 88.72f, -103.97f,
                     0.f, std::numeric_limits<float>::min()}) {
    float below = edge, above = edge;
    for (int k = 0; k < 4; ++k) {
      xs.push_back(below), xs.push_back(above), xs.push_back(-below);
      below = std::nextafter(below, -INFINITY), above = std::nextafter(above, INFINITY);
    }
  }
  for (float v : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), NAN, -0.f})
    xs.push_back(v);
  const std::int64_t n = std::int64_t(xs.size());
  INFO(n << " floats");
  const Tensor x = nx::create(nx::float32, {n}, std::span<const float>(xs));
  auto f = [](const Tensor& v) { return std::vector<Tensor>{nx::exp(v), nx::tanh(v)}; };
  const std::size_t promoted = vm_and_native_agree(f, x);
  CHECK(promoted == (promotes() && exp_in_registers() ? 1u : 0u));
  const auto [on_vm, code] = both_codes(f, x);
  const std::vector<Tensor> args{x};
  const rune::vm::Values got = rune::vm::run(*code, args);
  const std::vector<float> exps = nx::to_vector<float>(got[0]), tanhs = nx::to_vector<float>(got[1]);
  std::int64_t exp_worst = 0, tanh_worst = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const double v = xs[k];
    if (std::isnan(v)) {
      CHECK((std::isnan(exps[k]) && std::isnan(tanhs[k])));
      continue;
    }
    exp_worst = std::max(exp_worst, float_steps(exps[k], std::exp(v)));
    tanh_worst = std::max(tanh_worst, float_steps(tanhs[k], std::tanh(v)));
  }
  CHECK(exp_worst <= 1);
  CHECK(tanh_worst <= 3);
}
