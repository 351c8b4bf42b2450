// W9 (rune): the ranks of an MPI job (run by run.sh under `mpiexec -n 2`).
// (a) psum from compiled code (rune::jit of rune::psum(rune::ranks(), x))
// against a raw MPI_Allreduce (MPI_SUM, float64) on the same sizes, 8 B to
// 64 MiB: the sum in rune's fixed order, and with RUNE_RANKS_SUM=fast
// (MPI_Allreduce on the planned buffers; run.sh runs the program again
// with it set). Rank 0 reports; every rank runs the same calls, so the
// collectives keep the ranks in step.
//
// Each timed sample makes CALLS calls (fewer for larger sizes); the row
// gives the median per call over the samples.
#include <mpi.h>
#include <rune/rune.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

namespace {

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

int main() {
  const rune::Axis ranks = rune::ranks();  // (starts MPI under mpiexec)
  const auto rank = std::int64_t(nx::item(rune::lane_index(ranks)));
  const std::int64_t size = rune::lane_count(ranks);
  const char* sum_mode = std::getenv("RUNE_RANKS_SUM");
  const bool fast = sum_mode && std::string(sum_mode) == "fast";
  const std::string mode = fast ? "RUNE_RANKS_SUM=fast: MPI's order" : "fixed order";
  const auto psum = rune::jit([&](const nx::Tensor& x) { return rune::psum(ranks, x); });

  // Check: rank r holds r + 1 + i / n at element i; the sum is known.
  bool ok = size > 1;
  for (std::size_t bytes : {std::size_t(8), std::size_t(1) << 20}) {
    const auto n = std::int64_t(bytes / 8);
    const nx::Tensor x = nx::arange(nx::float64, 0, double(n)) / double(n) + double(rank + 1);
    const std::vector<double> got = nx::to_vector<double>(psum(x));
    for (std::int64_t i = 0; i < n; ++i)
      ok = ok && got[std::size_t(i)] == double(size * (size + 1) / 2) + double(size) * (double(i) / double(n));
  }
  if (rank == 0) {
    int version = 0, subversion = 0;
    MPI_Get_version(&version, &subversion);
    std::printf("# W9 rune check: %lld ranks, MPI %d.%d; psum (%s) of known values over 8 B and 1 MiB: %s\n",
                static_cast<long long>(size), version, subversion, mode.c_str(), ok ? "ok" : "WRONG");
  }
  if (!ok) return 1;

  for (std::size_t bytes = 8; bytes <= (std::size_t(64) << 20); bytes *= (bytes < 8192 ? 8 : 4)) {
    const auto n = std::int64_t(bytes / 8);
    const int calls = int(std::clamp<std::size_t>((std::size_t(4) << 20) / bytes, 1, 10000));
    const nx::Tensor x = nx::full(nx::float64, {n}, double(rank + 1));
    const int reps = bytes >= (std::size_t(8) << 20) ? 5 : 9;
    nx::Tensor y;
    bench::Stats r = bench::measure(
        [&] {
          for (int i = 0; i < calls; ++i) {
            y = psum(x);
            bench::keep(y);
          }
        },
        reps, 1);
    const std::string sized = size_text(bytes);
    const std::string notes = std::to_string(size) + " ranks; " + std::to_string(calls) + " calls per sample";
    if (rank == 0)
      bench::report("W9", "rune jit psum (" + mode + "), " + sized, r, fmtd("%.2f us/call", r.med / calls * 1e6),
                    notes + "; new result per call");
    if (fast) continue;  // (MPI_Allreduce alone is measured once, in the fixed-order run)
    std::vector<double> in(static_cast<std::size_t>(n), double(rank + 1));
    std::vector<double> out(static_cast<std::size_t>(n));
    bench::Stats m = bench::measure(
        [&] {
          for (int i = 0; i < calls; ++i) {
            MPI_Allreduce(in.data(), out.data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            bench::keep(out);
          }
        },
        reps, 1);
    if (rank == 0)
      bench::report("W9", "MPI_Allreduce float64 sum (reference), " + sized, m,
                    fmtd("%.2f us/call", m.med / calls * 1e6), notes + "; caller's buffers");
  }
  return 0;
}
