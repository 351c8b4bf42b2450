// W9 (rune): the ranks of an MPI job, run by run.sh under mpiexec (one rank
// per core). Rank 0 reports; every rank runs the same calls, so the
// collectives keep the ranks in step. `bench_w9 MODE`:
//   psum      rune::jit of rune::psum(rune::ranks(), x) on float64 vectors
//             of 8 B to 64 MiB (a new result per call, and the same program
//             run into the caller's buffer by rune::Loaded::into), against a
//             raw MPI_Allreduce(MPI_SUM) of the same size on the caller's
//             buffers (into one buffer, and into two in turn as a new
//             result per call writes): the sum in rune's fixed order, and
//             (run again with RUNE_RANKS_SUM=fast) MPI_Allreduce on the
//             planned buffers. The four alternate in rounds.
//   train     data-parallel training: W4's MLP step (batch 128 per rank,
//             float32; bench/mlp.hpp) with the gradient averaged over the
//             ranks (pmean of the gradient's structure: one exchange), against
//             the same step without the exchange (every rank alone, all at
//             once), MPI_Allreduce of the gradient's 203,530 floats, and the
//             step alone followed by that MPI_Allreduce (an exchange written
//             by hand), alternating in rounds; the peer is
//             bench/peer_w9_ddp.py (PyTorch DDP over gloo).
//   ensemble  1,024 Lorenz-63 rollouts of 1,000 steps (W2's step, float64)
//             split over the ranks, each rank's share under rune::vmap of a
//             scan, one statistic (the mean final x) reduced over the ranks:
//             run on 1 and on 2 ranks for the scaling.
// Each timed sample makes several calls; a row gives the median per call.
#include <boost/align/aligned_allocator.hpp>
#include <mpi.h>
#include <rune/rune.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "bench.hpp"
#include "mlp.hpp"

using bench::fmtd;
using nx::Tensor;

namespace {

const rune::Axis ranks = rune::ranks();

std::int64_t rank() { return std::int64_t(nx::item(rune::lane_index(ranks))); }
std::int64_t size() { return rune::lane_count(ranks); }

// The caller's buffers, 64-byte aligned as rune's own are: MPI's copies of a
// buffer run at different speeds by its alignment (20% at 512 KiB here).
template <class T> using Buffer = std::vector<T, boost::alignment::aligned_allocator<T, 64>>;

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10)) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void report(const std::string& impl, const bench::Stats& s, int calls, const std::string& notes, double scale = 1e6,
            const char* unit = "us") {
  if (rank() == 0)
    bench::report("W9", impl, s, fmtd("%.2f ", s.med / calls * scale) + unit + "/call", notes);
}

// ---- psum

int psum_mode() {
  const char* sum_mode = std::getenv("RUNE_RANKS_SUM");
  const bool fast = sum_mode && std::string(sum_mode) == "fast";
  const std::string mode = fast ? "RUNE_RANKS_SUM=fast: MPI's order" : "fixed order";
  const auto psum = rune::jit([](const Tensor& x) { return rune::psum(ranks, x); });

  // Check: rank r holds r + 1 + i / n at element i; the sum is known.
  bool ok = size() > 1;
  for (std::size_t bytes : {std::size_t(8), std::size_t(1) << 20}) {
    const auto n = std::int64_t(bytes / 8);
    const Tensor x = nx::arange(nx::float64, 0, double(n)) / double(n) + double(rank() + 1);
    const std::vector<double> got = nx::to_vector<double>(psum(x));
    for (std::int64_t i = 0; i < n; ++i)
      ok = ok && got[std::size_t(i)] == double(size() * (size() + 1) / 2) + double(size()) * (double(i) / double(n));
  }
  if (rank() == 0)
    std::printf("# W9 rune check: %lld ranks; psum (%s) of known values over 8 B and 1 MiB: %s\n",
                static_cast<long long>(size()), mode.c_str(), ok ? "ok" : "WRONG");
  if (!ok) return 1;

  constexpr std::size_t KiB = 1024, MiB = KiB * KiB;
  for (std::size_t bytes : {std::size_t(8), std::size_t(64), std::size_t(512), 4 * KiB, 8 * KiB, 32 * KiB, 128 * KiB,
                            512 * KiB, 2 * MiB, 8 * MiB, 64 * MiB}) {
    const auto n = std::int64_t(bytes / 8);
    const int calls = int(std::clamp<std::size_t>((std::size_t(4) << 20) / bytes, 1, 10000));
    const int reps = bytes >= 8 * MiB ? 2 : 3;  // (per round: 3 rounds)
    const std::string notes = std::to_string(size()) + " ranks; " + std::to_string(calls) + " calls per sample";
    const Tensor x = nx::full(nx::float64, {n}, double(rank() + 1));
    Tensor y;
    // The same program run into the caller's buffer, as MPI_Allreduce writes.
    const rune::Loaded<Tensor(Tensor)> loaded(psum.program(x));
    Buffer<double> into(static_cast<std::size_t>(n));
    const Tensor result = nx::borrow(nx::float64, {n}, static_cast<void*>(into.data()));
    Buffer<double> in(static_cast<std::size_t>(n), double(rank() + 1));
    Buffer<double> out(static_cast<std::size_t>(n)), other(static_cast<std::size_t>(n));
    // In rounds, the four alternating, so a drift of the machine falls on each alike.
    const std::vector<bench::Stats> s = bench::measure_rounds(
        3, reps, 1,
        [&] {
          for (int i = 0; i < calls; ++i) {
            y = psum(x);
            bench::keep(y);
          }
        },
        [&] {
          for (int i = 0; i < calls; ++i) loaded.into(result, x);
          bench::keep(into);
        },
        [&] {
          for (int i = 0; i < calls; ++i) {
            MPI_Allreduce(in.data(), out.data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            bench::keep(out);
          }
        },
        [&] {  // (as `y = psum(x)` does: the last result lives while the next is written)
          for (int i = 0; i < calls; ++i) {
            MPI_Allreduce(in.data(), (i % 2 ? other : out).data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            bench::keep(out);
          }
        });
    report("rune jit psum (" + mode + "), " + size_text(bytes), s[0], calls, notes + "; new result per call");
    report("rune Loaded::into psum (" + mode + "), " + size_text(bytes), s[1], calls, notes + "; caller's buffer");
    if (fast) continue;  // (MPI_Allreduce is reported once, from the fixed-order run)
    report("MPI_Allreduce float64 sum (reference), " + size_text(bytes), s[2], calls, notes + "; caller's buffers");
    report("MPI_Allreduce float64 sum into two buffers in turn (reference), " + size_text(bytes), s[3], calls,
           notes + "; caller's buffers, the result written to each in turn");
  }
  return 0;
}

// ---- train

int train_mode() {
  using mlp::MLP;
  const int STEPS = 20;
  std::mt19937 data(unsigned(100 + rank()));  // (each rank's own batch)
  const Tensor x = mlp::randn(data, {mlp::B, mlp::D}, 1.0), t = mlp::randn(data, {mlp::B, mlp::O}, 1.0);
  std::mt19937 same(0);  // (the same parameters on every rank)
  const MLP p0 = mlp::initial(same);
  auto loss = [&](const MLP& p) { return mlp::loss(p, x, t); };
  const auto parallel = rune::jit([&](const MLP& p) { return mlp::sgd(p, rune::pmean(ranks, rune::grad(loss)(p))); });
  const auto alone = rune::jit([&](const MLP& p) { return mlp::sgd(p, rune::grad(loss)(p)); });

  // Check: after STEPS data-parallel steps every rank holds the same bits.
  MLP p = p0;
  for (int i = 0; i < STEPS; ++i) p = parallel(p);
  const bool same_bits = nx::item(nx::all(nx::equal(rune::all_gather(ranks, p.W1), p.W1))) != 0;
  const double before = nx::item(rune::pmean(ranks, loss(p0))), after = nx::item(rune::pmean(ranks, loss(p)));
  const bool ok = same_bits && after < before;
  if (rank() == 0)
    std::printf("# W9 rune check: %lld ranks, data-parallel MLP: after %d steps every rank's W1 has the same bits: "
                "%s; the mean loss went from %.6f to %.6f: %s\n",
                static_cast<long long>(size()), STEPS, same_bits ? "yes" : "NO", before, after, ok ? "ok" : "WRONG");
  if (!ok) return 1;

  const std::string notes = std::to_string(size()) + " ranks, batch 128 per rank, float32; " + std::to_string(STEPS) +
                            " steps per sample";
  const int n = int(mlp::D * mlp::H + mlp::H + mlp::H * mlp::O + mlp::O);
  Buffer<float> in(static_cast<std::size_t>(n), 1.f), out(static_cast<std::size_t>(n));
  auto allreduce = [&] {
    MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    bench::keep(out);
  };
  auto steps_of = [&](const auto& step) {
    return [&, q = p0]() mutable {
      for (int i = 0; i < STEPS; ++i) q = step(q);
      bench::keep(q);
    };
  };
  // In rounds, the four alternating, so a drift of the machine falls on each alike.
  const std::vector<bench::Stats> s = bench::measure_rounds(
      3, 3, 1, steps_of(parallel), steps_of(alone),
      [&] {
        for (int i = 0; i < STEPS; ++i) allreduce();
      },
      steps_of([&](const MLP& q) {
        allreduce();
        return alone(q);
      }));
  report("rune data-parallel MLP step (pmean of the gradient)", s[0], STEPS, notes, 1e3, "ms");
  report("rune MLP step alone (no exchange; every rank at once)", s[1], STEPS, notes, 1e3, "ms");
  report("MPI_Allreduce of the gradient (reference)", s[2], STEPS,
         std::to_string(size()) + " ranks; " + std::to_string(n) + " float32 (the MLP's parameters)", 1e3, "ms");
  report("rune MLP step alone, then MPI_Allreduce of as many floats (reference: an exchange written by hand)", s[3],
         STEPS, notes + "; the ranks wait for each other every step", 1e3, "ms");
  return 0;
}

// ---- ensemble

using State = std::tuple<Tensor, Tensor, Tensor>;

State lorenz_step(const State& s) {
  const auto& [x, y, z] = s;
  const double dt = 0.01, sigma = 10, rho = 28, beta = 8.0 / 3.0;
  const Tensor dx = sigma * (y - x), dy = x * (rho - z) - y, dz = x * y - beta * z;
  return {x + dt * dx, y + dt * dy, z + dt * dz};
}

int ensemble_mode() {
  const std::int64_t total = 1024, steps = 1000, mine = total / size();
  // Rollout k starts at (1 + k / 1024, 1, 1): this rank's share.
  const Tensor x0 = (nx::arange(nx::float64, 0, double(mine)) + double(rank() * mine)) / double(total) + 1.;
  const Tensor ones = nx::ones(nx::float64, {mine});
  auto rollout = [&](const Tensor& x, const Tensor& y, const Tensor& z) {
    return std::get<0>(rune::scan([](const State& s) { return std::pair{lorenz_step(s), std::tuple<>{}}; },
                                  State{x, y, z}, steps)
                           .first);
  };
  const auto mean_final_x =
      rune::jit([&](const Tensor& x) { return rune::pmean(ranks, nx::mean(rune::vmap(rollout)(x, ones, ones))); });
  const double statistic = nx::item(mean_final_x(x0));
  if (rank() == 0)
    std::printf("# W9 rune check: %lld ranks, ensemble of %lld Lorenz rollouts of %lld steps: mean final x %.17g\n",
                static_cast<long long>(size()), static_cast<long long>(total), static_cast<long long>(steps),
                statistic);
  const bench::Stats s = bench::measure([&] { bench::keep(mean_final_x(x0)); }, 7, 1);
  report("rune ensemble, 1,024 Lorenz rollouts (vmap of a scan; pmean of the statistic), " + std::to_string(size()) +
             (size() == 1 ? " rank" : " ranks"),
         s, 1, std::to_string(mine) + " rollouts of 1,000 steps per rank, float64", 1e3, "ms");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "psum") return psum_mode();
  if (mode == "train") return train_mode();
  if (mode == "ensemble") return ensemble_mode();
  std::fprintf(stderr, "usage: mpiexec -n 2 bench_w9 psum|train|ensemble\n");
  return 2;
}
