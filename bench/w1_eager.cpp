// W1 (rune): eager per-op overhead, 1000 sequential `x = x + 1.0` on a
// 4-element float64 tensor. Same workload as the peers'
// bench/peers/cpp/w1_libtorch.cpp and py/w1_eager.py.
//
// Each timed sample runs RUNS_PER_SAMPLE chains of 1000 ops from a fresh
// handle to the same starting tensor; ns/op = sample time / ops per sample.
//
// `bench_w1 --profile [SECONDS]` only runs the workload's loop (default 3 s),
// for a profiler: perf record -g bench/bench_w1 --profile
#include <rune/nx.hpp>

#include <tbb/info.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

int main(int argc, char** argv) {
  const int N_OPS = 1000;
  const int RUNS_PER_SAMPLE = 20;  // 2e4 ops per timed sample
  const double OPS = double(N_OPS) * RUNS_PER_SAMPLE;
  std::printf("# W1 rune: nx eager, tbb default concurrency=%d\n", tbb::info::default_concurrency());

  const nx::Tensor x0 = nx::ones(nx::float64, {4});

  // The workload: a new result tensor per op, the previous one released.
  auto chain = [&] {
    nx::Tensor x = x0;
    for (int i = 0; i < N_OPS; ++i) x = x + 1.0;
    return x;
  };
  // Sanity: every element is 1001 and the dtype/shape are kept.
  {
    nx::Tensor x = chain();
    std::vector<double> v = nx::to_vector<double>(x);
    bool ok = x.dtype() == nx::float64 && x.shape() == nx::Shape{4} && v.size() == 4;
    for (double e : v) ok = ok && e == 1001.0;
    std::printf("# W1 rune check: x after 1000 ops = [%.1f, %.1f, %.1f, %.1f] dtype=float64 shape=[4]: %s\n",
                v.size() > 0 ? v[0] : -1., v.size() > 1 ? v[1] : -1., v.size() > 2 ? v[2] : -1.,
                v.size() > 3 ? v[3] : -1., ok ? "ok" : "WRONG");
    if (!ok) return 1;
  }

  if (argc > 1 && std::strcmp(argv[1], "--profile") == 0) {
    const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
    const auto t0 = std::chrono::steady_clock::now();
    long chains = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
      nx::Tensor x = chain();
      bench::keep(x);
      ++chains;
    }
    std::printf("# W1 rune --profile: %ld chains of %d ops in %.1f s\n", chains, N_OPS, seconds);
    return 0;
  }

  double sink = 0;
  auto sample = [&] {
    for (int r = 0; r < RUNS_PER_SAMPLE; ++r) {
      nx::Tensor x = chain();
      bench::keep(x);
    }
  };
  bench::Stats s = bench::measure(sample, 21, 3);
  bench::report("W1", "rune nx eager (x = x + 1.0)", s, fmtd("%.1f ns/op", s.med / OPS * 1e9),
                "2e4 ops per sample (20 chains of 1000); float64[4]; new result per op");

  // [extra] tensor + tensor of the same shape (no scalar operand to wrap).
  const nx::Tensor one = nx::ones(nx::float64, {4});
  auto sample_tt = [&] {
    for (int r = 0; r < RUNS_PER_SAMPLE; ++r) {
      nx::Tensor x = x0;
      for (int i = 0; i < N_OPS; ++i) x = x + one;
      bench::keep(x);
    }
  };
  {
    nx::Tensor x = x0;
    for (int i = 0; i < N_OPS; ++i) x = x + one;
    if (nx::item(x, {3}) != 1001.0) {
      std::printf("# W1 rune check (tensor + tensor): WRONG (%g)\n", nx::item(x, {3}));
      return 1;
    }
  }
  bench::Stats s2 = bench::measure(sample_tt, 21, 3);
  bench::report("W1", "[extra] rune nx eager, tensor + tensor (x = x + one)", s2,
                fmtd("%.1f ns/op", s2.med / OPS * 1e9), "2e4 ops per sample; float64[4]");

  // [extra] the fixed cost of reading a result: one nx::item per chain end.
  bench::Stats s3 = bench::measure(
      [&] {
        for (int i = 0; i < N_OPS * RUNS_PER_SAMPLE; ++i) sink += nx::item(x0, {1});
      },
      11, 2);
  bench::report("W1", "[extra] rune nx::item(x, {1}) on float64[4]", s3, fmtd("%.1f ns/call", s3.med / OPS * 1e9),
                "2e4 calls per sample");
  if (sink == 42) std::printf("#\n");
  return 0;
}
