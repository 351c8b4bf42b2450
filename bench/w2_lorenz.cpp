// W2 (rune): a small-step loop and its gradient. Lorenz-63, explicit Euler,
// dt = 0.01, sigma = 10, rho = 28, beta = 8/3, float64, from (1, 1, 1), with
// the IEEE operations of the peers' bench/peers/cpp/w2_floor.cpp in the
// same order:
//   dx = sigma*(y-x); dy = x*(rho-z) - y; dz = x*y - beta*z;
//   x = x + dt*dx; y = y + dt*dy; z = z + dt*dz
//   (a) 100,000 steps: rune::jit of a rune::scan whose carry is three 0-d
//       float64 tensors (and, [extra], one float64[3] tensor), against the
//       plain C++ scalar loop compiled in this program with the project's
//       flags (-O3 -ffp-contract=off); the final states must be equal bit
//       for bit.
//   (b) the gradient of the final x with respect to the initial state through
//       1,000 steps: rune::jit(rune::grad(f)) against a hand-written reverse
//       loop over the stored trajectory (as w2_floor's grad_rev).
//   (c) first call (trace + compile + first run) of each jitted function, in
//       ms, with a fresh rune::jit object per sample.
//
// The scans are scans by length (rune::scan(f, init, steps)) and emit nothing
// per step (std::tuple<>). Their steps are scalar, so rune promotes them to
// machine code (docs/vm.md, "Machine code"); run with RUNE_NATIVE=off, the
// program reports its rune rows again as [extra] rows of the VM alone
// (bench/run.sh runs it both ways) and nothing else.
#include <rune/rune.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

static const double SIGMA = 10.0, RHO = 28.0, BETA = 8.0 / 3.0, DT = 0.01;
static const long N = 100000;  // steps of (a)
static const long NG = 1000;   // steps of (b)

using V3 = std::array<double, 3>;
using State = std::tuple<nx::Tensor, nx::Tensor, nx::Tensor>;

// ---- plain C++ (the floors of this program)
__attribute__((noinline)) V3 euler_loop(V3 s, long n) {
  double x = s[0], y = s[1], z = s[2];
  for (long k = 0; k < n; ++k) {
    const double dx = SIGMA * (y - x);
    const double dy = x * (RHO - z) - y;
    const double dz = x * y - BETA * z;
    x = x + DT * dx;
    y = y + DT * dy;
    z = z + DT * dz;
  }
  return {x, y, z};
}

// d x_n / d s0: the forward pass stores every state, then the adjoint of x_n
// runs back through the transposed Jacobians of the steps,
// J = I + dt * [[-sigma, sigma, 0], [rho - z, -1, -x], [y, x, -beta]].
__attribute__((noinline)) V3 reverse_loop(V3 s, long n, std::vector<V3>& path) {
  path.resize(std::size_t(n));
  double x = s[0], y = s[1], z = s[2];
  for (long k = 0; k < n; ++k) {
    path[std::size_t(k)] = {x, y, z};
    const double dx = SIGMA * (y - x), dy = x * (RHO - z) - y, dz = x * y - BETA * z;
    x = x + DT * dx;
    y = y + DT * dy;
    z = z + DT * dz;
  }
  double ax = 1, ay = 0, az = 0;
  for (long k = n - 1; k >= 0; --k) {
    const V3& p = path[std::size_t(k)];
    const double bx = ax + DT * (-SIGMA * ax + (RHO - p[2]) * ay + p[1] * az);
    const double by = ay + DT * (SIGMA * ax - ay + p[0] * az);
    const double bz = az + DT * (-p[0] * ay - BETA * az);
    ax = bx;
    ay = by;
    az = bz;
  }
  return {ax, ay, az};
}

// ---- rune: one Euler step, the same operations in the same order
static State step(const State& s) {
  const auto& [x, y, z] = s;
  const nx::Tensor dx = SIGMA * (y - x);
  const nx::Tensor dy = x * (RHO - z) - y;
  const nx::Tensor dz = x * y - BETA * z;
  return {x + DT * dx, y + DT * dy, z + DT * dz};
}

static nx::Tensor step3(const nx::Tensor& s) {  // [extra] the state as one float64[3]
  const nx::Tensor x = nx::get(s, 0), y = nx::get(s, 1), z = nx::get(s, 2);
  const nx::Tensor ds = nx::stack({SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z});
  return s + DT * ds;
}

// `steps` Euler steps as one scan by length (no per-step output).
template <class C, class Step> static C run_steps(const C& s0, long steps, Step one) {
  return rune::scan([one](const C& s) { return std::pair{one(s), std::tuple<>{}}; }, s0, std::int64_t(steps)).first;
}

static State state(double x, double y, double z) {
  return {nx::scalar(nx::float64, x), nx::scalar(nx::float64, y), nx::scalar(nx::float64, z)};
}
static V3 values(const State& s) {
  return {nx::item(std::get<0>(s)), nx::item(std::get<1>(s)), nx::item(std::get<2>(s))};
}
static bool same_bits(const V3& a, const V3& b) {
  for (int i = 0; i < 3; ++i)
    if (std::bit_cast<std::uint64_t>(a[std::size_t(i)]) != std::bit_cast<std::uint64_t>(b[std::size_t(i)]))
      return false;
  return true;
}
static std::string show(const V3& v) {
  return fmtd("[%.17g, ", v[0]) + fmtd("%.17g, ", v[1]) + fmtd("%.17g]", v[2]);
}

// With RUNE_NATIVE=off: rune's rows as [extra] rows of the VM alone, and
// no other row (the plain loops were reported by the run with the tier).
static const bool vm_alone = [] {
  const char* v = std::getenv("RUNE_NATIVE");
  return v && std::string(v) == "off";
}();
static std::string labelled(const std::string& label) {
  if (!vm_alone) return label;
  const std::string bare = label.rfind("[extra] ", 0) == 0 ? label.substr(8) : label;
  return "[extra] " + bare + ", on the VM alone (RUNE_NATIVE=off)";
}
static void report_plain(const char* w, const char* label, const bench::Stats& s, const std::string& per,
                         const std::string& notes) {
  if (!vm_alone) bench::report(w, label, s, per, notes);
}

int main() {
  volatile double one = 1.0;  // the start is not a compile-time constant for the C++ loops
  const State s0 = state(one, one, one);
  const nx::Tensor s0v = nx::create(nx::float64, {3}, {double(one), double(one), double(one)});
  int failures = 0;

  auto lorenz = [](const State& s) { return run_steps(s, N, step); };
  auto lorenz3 = [](const nx::Tensor& s) { return run_steps(s, N, step3); };
  auto final_x = [](const State& s) { return std::get<0>(run_steps(s, NG, step)); };

  // (c) first calls: a fresh rune::jit object per sample (its own cache), so
  // each sample traces, compiles and runs once; the first sample also pays the
  // process's one-time costs, and is given apart.
  double first_fwd0 = 0, first_grad0 = 0;
  bench::Stats first_fwd = bench::measure(
      [&] {
        const auto t0 = std::chrono::steady_clock::now();
        auto fresh = rune::jit(lorenz);
        State r = fresh(s0);
        bench::keep(r);
        if (first_fwd0 == 0) first_fwd0 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      },
      3, 0);
  bench::Stats first_grad = bench::measure(
      [&] {
        const auto t0 = std::chrono::steady_clock::now();
        auto fresh = rune::jit(rune::grad(final_x));
        State r = fresh(s0);
        bench::keep(r);
        if (first_grad0 == 0) first_grad0 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      },
      3, 0);

  // (a) 100,000 steps.
  const auto compiled = rune::jit(lorenz);
  const auto compiled3 = rune::jit(lorenz3);
  V3 floor_s{}, rune_s{}, rune3_s{};
  State out;
  nx::Tensor out3;
  bench::Stats f = bench::measure([&] { floor_s = euler_loop({one, one, one}, N); }, 21, 3);
  bench::Stats c = bench::measure([&] { out = compiled(s0); }, 5, 1);
  bench::Stats c3 = bench::measure([&] { out3 = compiled3(s0v); }, 5, 1);
  rune_s = values(out);
  {
    std::vector<double> v = nx::to_vector<double>(out3);
    rune3_s = {v.at(0), v.at(1), v.at(2)};
  }
  const bool eq = same_bits(rune_s, floor_s), eq3 = same_bits(rune3_s, floor_s);
  if (!vm_alone) std::printf("# W2 final state (plain C++ loop, this program): %s\n", show(floor_s).c_str());
  const char* where = vm_alone ? ", on the VM alone" : "";
  std::printf("# W2 final state (rune jit scan, 3 scalars%s): %s; bitwise equal to the plain C++ loop: %s\n", where,
              show(rune_s).c_str(), eq ? "yes" : "NO");
  std::printf("# W2 final state (rune jit scan, float64[3]%s): %s; bitwise equal to the plain C++ loop: %s\n", where,
              show(rune3_s).c_str(), eq3 ? "yes" : "NO");
  failures += !eq + !eq3;

  const std::string steps = "100000 steps; scan by length, y = std::tuple<>";
  report_plain("W2", "plain C++ scalar loop (in bench_w2)", f, fmtd("%.2f ns/step", f.med / N * 1e9),
                "g++ -O3 -ffp-contract=off (meson release, project flags); 1 thread; noinline; 100000 steps");
  bench::report("W2", labelled("rune jit(scan), carry = 3 float64 scalars"), c,
                fmtd("%.1f ns/step, ", c.med / N * 1e9) + fmtd("%.1fx the C++ loop", c.med / f.med),
                std::string("bitwise equal: ") + (eq ? "yes" : "NO") + "; " + steps);
  bench::report("W2", labelled("[extra] rune jit(scan), carry = one float64[3] (nx::get, nx::stack)"), c3,
                fmtd("%.1f ns/step, ", c3.med / N * 1e9) + fmtd("%.1fx the C++ loop", c3.med / f.med),
                std::string("bitwise equal: ") + (eq3 ? "yes" : "NO") + "; " + steps);

  // (b) the gradient through 1,000 steps.
  const auto gradient = rune::jit(rune::grad(final_x));
  std::vector<V3> path;
  V3 hand{}, rg{};
  State g;
  bench::Stats r = bench::measure([&] { hand = reverse_loop({one, one, one}, NG, path); }, 21, 3);
  bench::Stats gs = bench::measure([&] { g = gradient(s0); }, 7, 1);
  rg = values(g);
  double rel = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t k = std::size_t(i);
    rel = std::max(rel, std::fabs(rg[k] - hand[k]) / std::fabs(hand[k]));
  }
  const bool gok = rel <= 1e-9;
  if (!vm_alone) {
    std::printf("# W2 grad d x_1000 / d s0 (plain C++ reverse loop, this program): %s\n", show(hand).c_str());
    std::printf("# W2 grad d x_1000 / d s0 (rune jit(grad)): %s; max relative difference %.3g: %s\n",
                show(rg).c_str(), rel, gok ? "ok" : "WRONG");
  }
  failures += !gok;
  report_plain("W2grad", "plain C++ hand-written reverse loop (in bench_w2)", r, fmtd("%.2f ns/step", r.med / NG * 1e9),
                "g++ -O3 -ffp-contract=off (meson release); stored trajectory; 1000 steps");
  bench::report("W2grad", labelled("rune jit(grad(f)), f(s0) = x after 1000 steps"), gs,
                fmtd("%.1f ns/step, ", gs.med / NG * 1e9) + fmtd("%.1fx the reverse loop", gs.med / r.med),
                "reverse mode through the scan; carry = 3 float64 scalars; 1000 steps");

  bench::report("W2first", labelled("rune jit(scan) first call, 100000 steps"), first_fwd, fmtd("%.1f ms", first_fwd.med * 1e3),
                fmtd("trace + compile + first run; the process's first %.1f ms; ", first_fwd0 * 1e3) +
                    fmtd("steady-state call %.1f ms; a fresh rune::jit object per sample", c.med * 1e3));
  bench::report("W2first", labelled("rune jit(grad) first call, 1000 steps"), first_grad, fmtd("%.1f ms", first_grad.med * 1e3),
                fmtd("trace + compile + first run; the process's first %.1f ms; ", first_grad0 * 1e3) +
                    fmtd("steady-state call %.2f ms; a fresh rune::jit object per sample", gs.med * 1e3));
  if (failures) std::printf("# W2 rune: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
