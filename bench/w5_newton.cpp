// W5 (rune): Newton's square root on 1,000,000 float64 lanes under
// rune::vmap with per-lane stopping (rune::iterate), as the peers' W5:
// a = linspace(0.5, 10000, 1e6), x0 = a, a lane is done when
// |x*x - a| < 1e-12*a, at most 100 steps. Eager (vmap traced and the batched
// iterate compiled and run on the VM on each call) and compiled (rune::jit of
// the vmap, traced and compiled once), against the plain C++ per-lane early-exit loop in
// the same program (one thread; the peers' floor runs with OpenMP).
#include <rune/rune.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

static const long N = 1000000;

int main() {
  const nx::Tensor a = nx::linspace(nx::float64, 0.5, 10000., N);
  auto newton = [](const nx::Tensor& lane) {
    return rune::iterate(
        100, [lane](const nx::Tensor& x) { return nx::less(nx::abs(x * x - lane), lane * 1e-12); },
        [lane](const nx::Tensor& x) { return (x + lane / x) * 0.5; }, lane);
  };
  auto mapped = rune::vmap(newton);
  auto compiled = rune::jit(rune::vmap(newton));

  const std::vector<double> av = nx::to_vector<double>(a);
  std::vector<double> floor_x(static_cast<std::size_t>(N));
  auto floor = [&] {
    for (long i = 0; i < N; ++i) {
      double ai = av[std::size_t(i)], xi = ai, tol = 1e-12 * ai;
      for (int k = 0; k < 100 && std::fabs(xi * xi - ai) >= tol; ++k) xi = 0.5 * (xi + ai / xi);
      floor_x[std::size_t(i)] = xi;
    }
  };
  nx::Tensor eager_x, compiled_x;
  bench::Stats f = bench::measure(floor, 5, 1);
  bench::Stats e = bench::measure([&] { eager_x = mapped(a); }, 5, 1);
  bench::Stats c = bench::measure([&] { compiled_x = compiled(a); }, 5, 1);
  const bool same = nx::to_vector<double>(eager_x) == floor_x && nx::to_vector<double>(compiled_x) == floor_x;
  std::printf("# W5: rune's results equal the plain C++ loop's bit for bit: %s\n", same ? "yes" : "NO");
  bench::report("W5", "plain C++ per-lane early exit (1 thr)", f, fmtd("%.2f ms", f.med * 1e3), "g++ -O2 (meson release)");
  bench::report("W5", "rune vmap + iterate, eager", e, fmtd("%.2f ms", e.med * 1e3) + fmtd(", %.1fx the C++ loop", e.med / f.med), "traced and compiled per call, run on the VM");
  bench::report("W5", "rune jit(vmap + iterate)", c, fmtd("%.2f ms", c.med * 1e3) + fmtd(", %.1fx the C++ loop", c.med / f.med), "bytecode VM");
}
