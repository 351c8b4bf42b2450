// W3 (rune): large elementwise work over 10,000,000 float32, x = linspace(-3, 3).
//   (a) the single add `a + b`                      (GB/s counts 12 B/elem: 2 reads + 1 write)
//   (b) the unfused eager expression
//       y = tanh(x * 2 + 1) * x - exp(-x * x)       ("effective" GB/s: 8 B/elem, read x + write y,
//                                                    as bench/peers w3_floor.cpp / w3_elementwise.py)
//   (c) the same expression compiled with rune::jit (same figures as (b))
// against the memory-bandwidth limit of this machine measured in the same
// program: STREAM-style copy `b = a` (8 B/elem) and add `c = a + b` (12 B/elem)
// in plain C++ over the same 10M floats. Write-allocate traffic is not counted
// (STREAM convention), for rune and the loops alike.
//
// rune runs its large elementwise loops on oneTBB. Everything is measured with
// TBB's default concurrency (all cores: "2 thr" here) and then again under
// tbb::global_control(max_allowed_parallelism, 1) ("1 thr").
#include <rune/rune.hpp>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

static const long N = 10'000'000;

// Plain C++ loops (the floors). GCC turns copy_memcpy's loop into a call to
// memcpy (loop-distribute-patterns), exactly as it does for the peers'
// w3_floor "STREAM copy"; glibc's memcpy uses non-temporal stores at this size.
// copy_stores forbids that transformation: an ordinary vectorised load/store
// loop, the way an elementwise kernel writes its output.
__attribute__((noinline)) void copy_memcpy(const float* __restrict a, float* __restrict b, long lo, long hi) {
  for (long i = lo; i < hi; ++i) b[i] = a[i];
}
__attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) void copy_stores(
    const float* __restrict a, float* __restrict b, long lo, long hi) {
  for (long i = lo; i < hi; ++i) b[i] = a[i];
}
__attribute__((noinline)) void add_loop(const float* __restrict a, const float* __restrict b, float* __restrict c,
                                        long lo, long hi) {
  for (long i = lo; i < hi; ++i) c[i] = a[i] + b[i];
}

// Runs f(lo, hi) over [0, N) cut into one contiguous piece per thread.
template <class F> void split(int threads, F&& f) {
  if (threads <= 1) return f(0L, N);
  tbb::parallel_for(
      tbb::blocked_range<int>(0, threads, 1),
      [&](const tbb::blocked_range<int>& r) {
        for (int k = r.begin(); k != r.end(); ++k) f(N * k / threads, N * (k + 1) / threads);
      },
      tbb::static_partitioner());
}

static std::string per_call(const bench::Stats& s) { return fmtd("%.2f ms/call, ", s.med * 1e3); }
static std::string gbs(const bench::Stats& s, double bytes_per_elem, const char* label) {
  return fmtd("%.2f GB/s ", bytes_per_elem * double(N) / s.med / 1e9) + label;
}

static int failures = 0;

static void run(int threads, const nx::Tensor& x, const nx::Tensor& ones, const std::vector<float>& xv,
                const std::vector<float>& ref) {
  const std::string thr = " (" + std::to_string(threads) + " thr)";
  const auto allowed = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  const std::string tnote =
      "threads=" + std::to_string(threads) + " (tbb max_allowed_parallelism=" + std::to_string(allowed) + ")";

  // (a) a + b: a new 40 MB result per call (from rune's buffer pool).
  {
    nx::Tensor c = x + ones;
    std::vector<float> cv = nx::to_vector<float>(c);
    long bad = 0;
    for (long i = 0; i < N; ++i) bad += cv[std::size_t(i)] != xv[std::size_t(i)] + 1.0f;
    std::printf("# W3 rune a + b check%s: %ld of %ld elements differ from the float sum: %s\n", thr.c_str(), bad, N,
                bad ? "WRONG" : "ok");
    failures += bad != 0;
  }

  // The chain's checksum, and its distance from the C++ tanhf/expf loop.
  auto check_chain = [&](const nx::Tensor& y, const std::string& label) {
    std::vector<float> yv = nx::to_vector<float>(y);
    double sum = 0, maxdiff = 0;
    for (long i = 0; i < N; ++i) {
      sum += yv[std::size_t(i)];
      maxdiff = std::max(maxdiff, std::fabs(double(yv[std::size_t(i)]) - double(ref[std::size_t(i)])));
    }
    bool ok = y.dtype() == nx::float32 && maxdiff <= 1e-5;
    std::printf("# W3 checksum (%s%s): %.17g; max |rune - C++ tanhf/expf loop| = %.3g: %s\n", label.c_str(),
                thr.c_str(), sum, maxdiff, ok ? "ok" : "WRONG");
    failures += !ok;
  };
  auto report_chain = [&](const char* name, const bench::Stats& s, const std::string& note) {
    bench::report("W3", name + thr, s,
                  per_call(s) + fmtd("%.2f ns/elem, ", s.med / double(N) * 1e9) +
                      fmtd("%.3g GB/s effective", 8.0 * double(N) / s.med / 1e9),
                  tnote + note);
  };

  // (b) the unfused expression: 8 ops, 7 temporaries and the result per call.
  auto expr = [&] { return nx::tanh(x * 2.0 + 1.0) * x - nx::exp(-x * x); };
  check_chain(expr(), "rune nx eager");
  bench::Stats ex = bench::measure([&] { nx::Tensor y = expr(); bench::keep(y); }, 11, 2);
  report_chain("rune nx eager expression", ex, "; unfused: 8 eager ops, new result per op");

  // (c) the same expression compiled: rune::jit, one trace, then the program
  // per call; its kernel as machine code (promoted in the first call, which
  // passes 2^17 elements) and on the VM alone (native_after -1), in
  // alternating rounds.
  auto chain = [](const nx::Tensor& v) { return nx::tanh(v * 2.0 + 1.0) * v - nx::exp(-v * v); };
  const auto compiled = rune::jit(chain);
  rune::JitOptions vm_alone;
  vm_alone.native_after = -1;
  const auto on_vm = rune::jit(chain, vm_alone);
  check_chain(compiled(x), "rune jit");
  check_chain(on_vm(x), "rune jit, VM alone");
  const auto cx = bench::measure_rounds(
      3, 5, 1, [&] { nx::Tensor y = compiled(x); bench::keep(y); }, [&] { nx::Tensor y = on_vm(x); bench::keep(y); });
  report_chain("rune jit expression", cx[0],
               "; rune::jit of the same chain (traced once); new result per call; its kernel as machine code "
               "(a block loop); 3 rounds of 5, alternating with the VM alone");
  report_chain("rune VM alone: jit expression", cx[1],
               "; the same, JitOptions::native_after = -1: the kernel on the VM");

  // The bandwidth limit, same size, preallocated outputs.
  float* a = static_cast<float*>(std::aligned_alloc(64, N * sizeof(float)));
  float* b = static_cast<float*>(std::aligned_alloc(64, N * sizeof(float)));
  float* c = static_cast<float*>(std::aligned_alloc(64, N * sizeof(float)));
  split(threads, [&](long lo, long hi) {  // first touch by the thread that will use the pages
    for (long i = lo; i < hi; ++i) a[i] = xv[std::size_t(i)], b[i] = 0.f, c[i] = 1.f;
  });
  const std::string cnote = "g++ (project flags: -O3, no -march=native); " + std::to_string(threads) +
                            " thr; output preallocated";
  // rune's add and the loops: 3 rounds of (2 warm-up + 7 timed calls of each, back to back).
  auto st = bench::measure_rounds(
      3, 7, 2, [&] { nx::Tensor r = x + ones; bench::keep(r); },
      [&] { split(threads, [&](long lo, long hi) { copy_memcpy(a, b, lo, hi); }); },
      [&] { split(threads, [&](long lo, long hi) { copy_stores(a, b, lo, hi); }); },
      [&] { split(threads, [&](long lo, long hi) { add_loop(a, c, b, lo, hi); }); });
  const std::string inter = "; 3 rounds of 7 back-to-back calls, alternating with the 3 C++ loops below";
  bench::report("W3add", "rune nx a + b" + thr, st[0], per_call(st[0]) + gbs(st[0], 12, "(12 B/elem)"),
                tnote + "; float32[1e7] + float32[1e7]; new result per call" + inter);
  bench::report("W3add", "C++ STREAM copy b = a" + thr, st[1], per_call(st[1]) + gbs(st[1], 8, "(8 B/elem)"),
                cnote + "; GCC emits memcpy (as the peers' w3_floor)");
  bench::report("W3add", "C++ copy loop b = a, plain vector stores" + thr, st[2],
                per_call(st[2]) + gbs(st[2], 8, "(8 B/elem)"), cnote + "; no memcpy (no-tree-loop-distribute-patterns)");
  bench::report("W3add", "C++ STREAM add c = a + b" + thr, st[3], per_call(st[3]) + gbs(st[3], 12, "(12 B/elem)"),
                cnote);
  long bad = 0;
  for (long i = 0; i < N; ++i) bad += b[i] != a[i] + 1.0f;
  failures += bad != 0;
  if (bad) std::printf("# W3 C++ add loop check: %ld elements wrong\n", bad);
  std::free(a);
  std::free(b);
  std::free(c);
}

int main() {
  std::printf("# W3 rune: tbb default concurrency=%d, n=%ld float32\n", tbb::info::default_concurrency(), N);
  const nx::Tensor x = nx::linspace(nx::float32, -3.0, 3.0, N);
  const nx::Tensor ones = nx::ones(nx::float32, {N});
  std::vector<float> xv = nx::to_vector<float>(x);
  if (long(xv.size()) != N || x.dtype() != nx::float32) {
    std::printf("# W3 rune linspace: WRONG size or dtype\n");
    return 1;
  }
  // numpy.linspace(-3, 3, N, dtype=float32), as the peers compute it.
  const double step = 6.0 / double(N - 1);
  long differ = 0;
  for (long i = 0; i < N; ++i) {
    float np = i == N - 1 ? 3.0f : float(double(i) * step + -3.0);
    differ += xv[std::size_t(i)] != np;
  }
  std::printf("# W3 rune linspace(-3, 3, 1e7) float32: %ld elements differ from numpy's values\n", differ);
  // Reference: the peers' plain C++ loop on the same inputs (glibc tanhf/expf).
  std::vector<float> ref(static_cast<std::size_t>(N));
  for (long i = 0; i < N; ++i) {
    float v = xv[std::size_t(i)];
    ref[std::size_t(i)] = std::tanh(v * 2.0f + 1.0f) * v - std::exp(-v * v);
  }

  run(tbb::info::default_concurrency(), x, ones, xv, ref);
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    run(1, x, ones, xv, ref);
  }
  if (failures) std::printf("# W3 rune: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
