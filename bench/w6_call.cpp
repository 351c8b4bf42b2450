// W6 (rune): the overhead of a compiled call. rune::jit of x * 2. + 1. on a
// float64[4], called many times with the same argument (the steady state: one
// trace, then a cache hit per call), as the peers' bench/peers/py/w6_call.py
// (torch.jit.script from Python), cpp/w6_libtorch.cpp (a TorchScript module
// from C++) and py/w_jit_peers.py w6 (Numba). [extra] the same two ops eagerly.
//
// Each timed sample makes CALLS calls; ns/call = sample time / CALLS; the row
// gives the median over the samples.
#include <rune/rune.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

int main() {
  const int CALLS = 10000;
  const nx::Tensor x = nx::ones(nx::float64, {4});
  const auto f = rune::jit([](const nx::Tensor& v) { return v * 2. + 1.; });

  auto first = std::chrono::steady_clock::now();
  nx::Tensor y = f(x);
  const double first_ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count() * 1e3;
  for (int i = 0; i < 100; ++i) y = f(x);
  const std::vector<double> v = nx::to_vector<double>(y);
  const bool ok = y.dtype() == nx::float64 && v == std::vector<double>{3., 3., 3., 3.} && f.traces() == 1;
  std::printf("# W6 rune check: jit(x * 2. + 1.)(ones float64[4]) = [%g, %g, %g, %g], %lld trace(s): %s; "
              "first call (trace + compile + run) %.3f ms\n",
              v.at(0), v.at(1), v.at(2), v.at(3), static_cast<long long>(f.traces()), ok ? "ok" : "WRONG", first_ms);
  if (!ok) return 1;

  bench::Stats s = bench::measure(
      [&] {
        for (int i = 0; i < CALLS; ++i) {
          y = f(x);
          bench::keep(y);
        }
      },
      11, 1);
  bench::report("W6", "rune jit(x * 2. + 1.) call", s, fmtd("%.1f ns/call", s.med / CALLS * 1e9),
                "float64[4]; 10000 calls per sample; 100 warm-up calls; new result per call");

  bench::Stats e = bench::measure(
      [&] {
        for (int i = 0; i < CALLS; ++i) {
          y = x * 2. + 1.;
          bench::keep(y);
        }
      },
      11, 1);
  bench::report("W6", "[extra] rune nx eager x * 2. + 1. (reference)", e, fmtd("%.1f ns/call", e.med / CALLS * 1e9),
                "float64[4]; 10000 calls per sample; 2 eager ops");
  return 0;
}
