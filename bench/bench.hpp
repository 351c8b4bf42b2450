// Timing helpers for rune's benchmark programs (bench/).
//
// The same protocol and output format as the peer programs in
// bench/peers/cpp/bench.hpp, so our lines sit in the same tables:
//   measure(fn, reps, warmup): `warmup` untimed calls of fn(), then `reps`
//   timed calls (std::chrono::steady_clock); median, min and max seconds.
//   report(...) prints one line
//     W# | implementation | median t (min t, max t, n=reps) | derived | notes
// Lines starting with '#' are checks (versions, threads, checksums).
// BENCH_TAG in the environment only adds a label to the implementation name.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench {

struct Stats {
  double med, lo, hi;
  int n;
};

template <class F>
Stats measure(F&& fn, int reps = 11, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ts;
  ts.reserve(std::size_t(reps));
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    ts.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(ts.begin(), ts.end());
  std::size_t m = ts.size() / 2;
  double med = (ts.size() % 2) ? ts[m] : 0.5 * (ts[m - 1] + ts[m]);
  return {med, ts.front(), ts.back(), int(ts.size())};
}

// Times several functions in rounds: each round runs, for f0 then f1 then ...,
// `warmup` untimed calls and `reps` timed calls back to back (so each one is
// measured in its own steady state, as a lone measure() would), and the rounds
// spread a slow drift of the machine (another process, clock) over all of them
// alike. Stats per function over rounds * reps samples, in order.
template <class... F>
std::vector<Stats> measure_rounds(int rounds, int reps, int warmup, F&&... fns) {
  constexpr std::size_t k = sizeof...(F);
  std::vector<std::vector<double>> ts(k);
  for (int r = 0; r < rounds; ++r) {
    std::size_t j = 0;
    auto block = [&](auto& fn) {
      for (int i = 0; i < warmup; ++i) fn();
      for (int i = 0; i < reps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        auto t1 = std::chrono::steady_clock::now();
        ts[j].push_back(std::chrono::duration<double>(t1 - t0).count());
      }
      ++j;
    };
    (block(fns), ...);
  }
  std::vector<Stats> out;
  for (auto& t : ts) {
    std::sort(t.begin(), t.end());
    std::size_t m = t.size() / 2;
    double med = (t.size() % 2) ? t[m] : 0.5 * (t[m - 1] + t[m]);
    out.push_back({med, t.front(), t.back(), int(t.size())});
  }
  return out;
}

inline std::string fmt_t(double sec) {
  char buf[64];
  if (sec >= 1.0) std::snprintf(buf, sizeof buf, "%.3f s", sec);
  else if (sec >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", sec * 1e3);
  else if (sec >= 1e-6) std::snprintf(buf, sizeof buf, "%.3f us", sec * 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f ns", sec * 1e9);
  return buf;
}

inline void report(const char* workload, const std::string& impl, const Stats& s, const std::string& derived,
                   const std::string& notes = "") {
  std::string full = impl;
  if (const char* tag = std::getenv("BENCH_TAG")) full += std::string(" [") + tag + "]";
  std::printf("%s | %s | median %s (min %s, max %s, n=%d) | %s | %s\n", workload, full.c_str(), fmt_t(s.med).c_str(),
              fmt_t(s.lo).c_str(), fmt_t(s.hi).c_str(), s.n, derived.c_str(), notes.c_str());
  std::fflush(stdout);
}

inline std::string fmtd(const char* f, double v) {
  char buf[128];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Keeps a value alive and opaque to the optimizer.
template <class T> inline void keep(T const& v) { asm volatile("" : : "g"(&v) : "memory"); }

}  // namespace bench
