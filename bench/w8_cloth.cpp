// W8 (rune): a cloth of masses and springs, gathered and scattered by index
// (issue 26). 300 masses on a 20 x 15 grid (spacing 0.1, tilted by 0.3 rad,
// its lowest corner 0.2 above the ground), float64 positions and velocities
// [300, 2], 1,097 springs (structural: 19*15 horizontal, 20*14 vertical;
// shear: both diagonals, 2*19*14) with int32 end indices a, b and rest
// lengths from the initial grid. It drops onto the ground (y = 0, a penalty
// contact through nx::where) and settles there. The step, as a JAX user
// writes it:
//   pa = take(pos, a), pb = take(pos, b)                     // [1097, 2]
//   d = pb - pa; len = sqrt(sum(d*d, 1, keepdims)); dir = d / len
//   rel = sum((take(vel, b) - take(vel, a)) * dir, 1, keepdims)
//   f = (k * (len - rest) + c * rel) * dir
//   force = segment_sum(f, a, 300) - segment_sum(f, b, 300) + [0, -9.81 * m]
//   y = pos[:, 1:2]; force = force + where(y < 0, -k_ground * y, 0) * [0, 1]
//   vel = vel + dt * force / m; pos = pos + dt * vel
// The plain C++ loop does the same IEEE operations, in one pass over the
// springs (F[a] += f, F[b] -= f) and one over the masses, so its sums are
// ordered differently: results agree to rounding (checked <= 1e-9), not to
// the bit.
//
// Rows: (1) the plain loop, 1,000 steps; (2) rune::jit of a rune::scan of
// 1,000 steps; (3) one frame through Loaded::into on the game's own arrays
// (nx::borrow) against one plain step, with the allocations per frame in the
// steady state (operator new and the malloc family, both counted here); (4)
// rune::vmap of the flight over 64 stiffnesses in one compiled call against
// the plain loop over the 64 cloths one after another, and [extra] 64
// compiled calls; (5) one compiled call of nx::take, nx::scatter_add and
// nx::segment_sum on rows of [n, 2] float64 by random int32 indices, n =
// 1,097 and 1,000,000, each against a plain loop doing the same reads and
// writes into a buffer allocated once. Targets: every ratio within 2x, the
// flight within 1e-9 of the plain loop, 0 allocations per frame.
// W8_BYTECODE=1 in the environment prints the bytecode (rune::bytecode) of
// the frame's step and of the mapped flight before their rows.
#include <rune/rune.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench.hpp"

using bench::fmtd;

// Allocations are counted by tests/allocations.hpp (the malloc family,
// through which operator new and nx's pool go; nothing in a sanitizer build).
#include "tests/allocations.hpp"

namespace {

// ---------------- the cloth
constexpr int NX = 20, NY = 15, M = NX * NY;  // masses
constexpr int STEPS = 1000;                   // steps of a flight
constexpr int LANES = 64;                     // cloths of the map
constexpr double SPACING = 0.1, TILT = 0.3, LIFT = 0.2;
constexpr double DT = 1e-3, K = 1e4, DAMPING = 5., MASS = 1., G = -9.81, K_GROUND = 1e5;
const double GRAVITY_Y = G * MASS;

struct Topology {
  std::vector<std::int32_t> a, b;
  std::vector<double> rest;
  std::vector<double> pos0;  // [M, 2]
};

Topology make_cloth() {
  Topology t;
  t.pos0.resize(2 * M);
  const double c = std::cos(TILT), s = std::sin(TILT);
  double lowest = 1e300;
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i < NX; ++i) {
      const double x = SPACING * i, y = SPACING * j;
      t.pos0[std::size_t(2 * (j * NX + i))] = c * x - s * y;
      t.pos0[std::size_t(2 * (j * NX + i) + 1)] = s * x + c * y;
      lowest = std::min(lowest, s * x + c * y);
    }
  for (int m = 0; m < M; ++m) t.pos0[std::size_t(2 * m + 1)] += LIFT - lowest;
  auto spring = [&](int i0, int j0, int i1, int j1) {
    t.a.push_back(j0 * NX + i0);
    t.b.push_back(j1 * NX + i1);
  };
  for (int j = 0; j < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) spring(i, j, i + 1, j);
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i < NX; ++i) spring(i, j, i, j + 1);
  for (int j = 0; j + 1 < NY; ++j)
    for (int i = 0; i + 1 < NX; ++i) {
      spring(i, j, i + 1, j + 1);
      spring(i + 1, j, i, j + 1);
    }
  for (std::size_t s2 = 0; s2 < t.a.size(); ++s2) {
    const double dx = t.pos0[std::size_t(2 * t.b[s2])] - t.pos0[std::size_t(2 * t.a[s2])];
    const double dy = t.pos0[std::size_t(2 * t.b[s2] + 1)] - t.pos0[std::size_t(2 * t.a[s2] + 1)];
    t.rest.push_back(std::sqrt(dx * dx + dy * dy));
  }
  return t;
}

// ---- plain C++: one step in place; `force` is scratch of 2 * M doubles.
__attribute__((noinline)) void plain_step(const Topology& t, double* pos, double* vel, double* force, double k) {
  std::memset(force, 0, sizeof(double) * 2 * M);
  const std::size_t springs = t.a.size();
  const std::int32_t* a = t.a.data();
  const std::int32_t* b = t.b.data();
  const double* rest = t.rest.data();
  for (std::size_t s = 0; s < springs; ++s) {
    const std::size_t ia = std::size_t(a[s]), ib = std::size_t(b[s]);
    const double dx = pos[2 * ib] - pos[2 * ia], dy = pos[2 * ib + 1] - pos[2 * ia + 1];
    const double len = std::sqrt(dx * dx + dy * dy);
    const double ux = dx / len, uy = dy / len;
    const double rel = (vel[2 * ib] - vel[2 * ia]) * ux + (vel[2 * ib + 1] - vel[2 * ia + 1]) * uy;
    const double fm = k * (len - rest[s]) + DAMPING * rel;
    const double fx = fm * ux, fy = fm * uy;
    force[2 * ia] += fx;
    force[2 * ia + 1] += fy;
    force[2 * ib] -= fx;
    force[2 * ib + 1] -= fy;
  }
  for (std::size_t m = 0; m < std::size_t(M); ++m) {
    const double y = pos[2 * m + 1];
    const double fx = force[2 * m];
    double fy = force[2 * m + 1] + GRAVITY_Y;
    fy = fy + (y < 0. ? -K_GROUND * y : 0.);
    vel[2 * m] = vel[2 * m] + DT * fx / MASS;
    vel[2 * m + 1] = vel[2 * m + 1] + DT * fy / MASS;
    pos[2 * m] = pos[2 * m] + DT * vel[2 * m];
    pos[2 * m + 1] = pos[2 * m + 1] + DT * vel[2 * m + 1];
  }
}

__attribute__((noinline)) void plain_flight(const Topology& t, double* pos, double* vel, double* force, double k) {
  for (int i = 0; i < STEPS; ++i) plain_step(t, pos, vel, force, k);
}

// ---- rune: the step over tensors, the topology captured (constants).
struct State {
  nx::Tensor pos, vel;  // float64 [M, 2]
};
RUNE_TREE(State, pos, vel);

struct Cloth {
  nx::Tensor a, b, rest, gravity, ey;
  explicit Cloth(const Topology& t)
      : a(nx::create(nx::int32, {std::int64_t(t.a.size())}, t.a)),
        b(nx::create(nx::int32, {std::int64_t(t.b.size())}, t.b)),
        rest(nx::create(nx::float64, {std::int64_t(t.rest.size()), 1}, t.rest)),
        gravity(nx::create(nx::float64, {2}, {0., GRAVITY_Y})),
        ey(nx::create(nx::float64, {2}, {0., 1.})) {}

  State step(const State& s, const nx::Tensor& k) const {
    const nx::Tensor pa = nx::take(s.pos, a, 0), pb = nx::take(s.pos, b, 0);
    const nx::Tensor d = pb - pa;
    const nx::Tensor len = nx::sqrt(nx::sum(d * d, {1}, true));
    const nx::Tensor dir = d / len;
    const nx::Tensor rel = nx::sum((nx::take(s.vel, b, 0) - nx::take(s.vel, a, 0)) * dir, {1}, true);
    const nx::Tensor f = (k * (len - rest) + DAMPING * rel) * dir;
    nx::Tensor force = nx::segment_sum(f, a, M) - nx::segment_sum(f, b, M) + gravity;
    const nx::Tensor y = nx::slice(s.pos, {0, 1}, {M, 2});  // [M, 1]
    force = force + nx::where(nx::less(y, 0.), -K_GROUND * y, 0.) * ey;
    const nx::Tensor vel = s.vel + DT * force / MASS;
    return {s.pos + DT * vel, vel};
  }
  State flight(const State& s, const nx::Tensor& k) const {
    return rune::scan([&](const State& c) { return std::pair{step(c, k), std::tuple<>{}}; }, s, std::int64_t(STEPS))
        .first;
  }
};

double max_abs_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return x.size() == y.size() ? m : INFINITY;
}
bool finite(const std::vector<double>& x) {
  for (double v : x)
    if (!std::isfinite(v)) return false;
  return true;
}
bench::Stats stats_of(std::vector<double> ts) {
  std::sort(ts.begin(), ts.end());
  const std::size_t m = ts.size() / 2;
  const double med = ts.size() % 2 ? ts[m] : 0.5 * (ts[m - 1] + ts[m]);
  return {med, ts.front(), ts.back(), int(ts.size())};
}
std::string time_text(double sec) { return bench::fmt_t(sec); }
std::string verdict(bool met) { return met ? "MET" : "NOT MET"; }
double lane_k(int lane) { return 5e3 + 15e3 * lane / (LANES - 1); }

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("# W8 check: %s: %s\n", what.c_str(), ok ? "ok" : "FAILED");
  std::fflush(stdout);
  failures += !ok;
}

// ---------------- the allocation counter's own check
void check_counter() {
  if (!test::counting) {
    std::printf("# W8 allocation counter: a sanitizer build, allocations not counted\n");
    return;
  }
  void* (*volatile m)(std::size_t) = std::malloc;
  void (*volatile f)(void*) = std::free;
  char* (*volatile dup)(const char*) = strdup;
  void* (*volatile n)(std::size_t) = ::operator new;
  void (*volatile d)(void*) = ::operator delete;
  const long a0 = test::allocations;
  void* p = m(24);
  const long a1 = test::allocations;
  char* q = dup("cloth");  // allocated inside glibc
  const long a2 = test::allocations;
  void* r = n(24);
  const long a3 = test::allocations;
  std::vector<double> v(7);  // std::allocator: operator new
  const long a4 = test::allocations;
  bench::keep(v);
  f(p);
  f(q);
  d(r);
  const bool ok = a1 - a0 == 1 && a2 - a1 == 1 && a3 - a2 == 1 && a4 - a3 == 1;
  std::printf("# W8 allocation counter: a deliberate malloc counted %ld, strdup (inside glibc) %ld, operator new %ld, "
              "a std::vector %ld\n",
              a1 - a0, a2 - a1, a3 - a2, a4 - a3);
  check(ok, "the allocation counter counts malloc (here and inside glibc) and operator new once each");
}

// ---------------- (5) per-primitive rows
void primitives(std::int64_t n) {
  std::mt19937_64 gen(26 + std::uint64_t(n));
  std::uniform_int_distribution<std::int32_t> pick(0, std::int32_t(n - 1));
  std::uniform_real_distribution<double> value(-1., 1.);
  std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
  std::vector<double> x(std::size_t(2 * n)), u(std::size_t(2 * n));
  for (auto& i : idx) i = pick(gen);
  for (auto& v : x) v = value(gen);
  for (auto& v : u) v = value(gen);
  const nx::Tensor tx = nx::create(nx::float64, {n, 2}, x), tu = nx::create(nx::float64, {n, 2}, u);
  const nx::Tensor ti = nx::create(nx::int32, {n}, idx);

  const auto take = rune::jit([](const nx::Tensor& t, const nx::Tensor& i) { return nx::take(t, i, 0); });
  const auto scatter = rune::jit(
      [](const nx::Tensor& t, const nx::Tensor& i, const nx::Tensor& v) { return nx::scatter_add(t, i, v, 0); });
  const std::int64_t segments = n;
  const auto segsum = rune::jit(
      [segments](const nx::Tensor& v, const nx::Tensor& i) { return nx::segment_sum(v, i, segments); });

  std::vector<double> out(std::size_t(2 * n));
  const std::int32_t* ip = idx.data();
  const double* xp = x.data();
  const double* up = u.data();
  double* op = out.data();
  auto plain_take = [&] {
    for (std::int64_t k = 0; k < n; ++k) {
      const std::size_t j = std::size_t(ip[k]);
      op[2 * k] = xp[2 * j];
      op[2 * k + 1] = xp[2 * j + 1];
    }
    bench::keep(out);
  };
  auto plain_scatter = [&] {
    std::memcpy(op, xp, sizeof(double) * std::size_t(2 * n));
    for (std::int64_t k = 0; k < n; ++k) {
      const std::size_t j = std::size_t(ip[k]);
      op[2 * j] += up[2 * k];
      op[2 * j + 1] += up[2 * k + 1];
    }
    bench::keep(out);
  };
  auto plain_segsum = [&] {
    std::memset(op, 0, sizeof(double) * std::size_t(2 * n));
    for (std::int64_t k = 0; k < n; ++k) {
      const std::size_t j = std::size_t(ip[k]);
      op[2 * j] += up[2 * k];
      op[2 * j + 1] += up[2 * k + 1];
    }
    bench::keep(out);
  };

  // The results against the plain loops'.
  const std::string size = std::to_string(n);
  plain_take();
  check(max_abs_diff(nx::to_vector<double>(take(tx, ti)), out) == 0., "jit(nx::take) n=" + size + " equals the plain loop");
  plain_scatter();
  const double ds = max_abs_diff(nx::to_vector<double>(scatter(tx, ti, tu)), out);
  check(ds <= 1e-12, "jit(nx::scatter_add) n=" + size + " within 1e-12 of the plain loop (" + fmtd("%.3g", ds) + ")");
  plain_segsum();
  const double dg = max_abs_diff(nx::to_vector<double>(segsum(tu, ti)), out);
  check(dg <= 1e-12, "jit(nx::segment_sum) n=" + size + " within 1e-12 of the plain loop (" + fmtd("%.3g", dg) + ")");

  const int reps = n > 100000 ? 5 : 7;
  const int inner = n > 100000 ? 1 : 100;  // calls per sample
  nx::Tensor r;
  const std::vector<bench::Stats> s = bench::measure_rounds(
      3, reps, 1,
      [&] {
        for (int i = 0; i < inner; ++i) plain_take();
      },
      [&] {
        for (int i = 0; i < inner; ++i) r = take(tx, ti);
      },
      [&] {
        for (int i = 0; i < inner; ++i) plain_scatter();
      },
      [&] {
        for (int i = 0; i < inner; ++i) r = scatter(tx, ti, tu);
      },
      [&] {
        for (int i = 0; i < inner; ++i) plain_segsum();
      },
      [&] {
        for (int i = 0; i < inner; ++i) r = segsum(tu, ti);
      });
  bench::keep(r);
  const std::string per = inner > 1 ? "; " + std::to_string(inner) + " calls per sample" : "";
  const std::string shape = "float64 [" + size + ", 2] rows, int32 [" + size + "] random indices in range";
  const char* names[3] = {"nx::take", "nx::scatter_add", "nx::segment_sum"};
  const char* plain_what[3] = {"out[k] = x[i[k]] (rows of 2), into a buffer allocated once",
                               "out = copy of target, then out[i[k]] += u[k], into a buffer allocated once",
                               "out = 0, then out[i[k]] += u[k], into a buffer allocated once"};
  for (int p = 0; p < 3; ++p) {
    const bench::Stats& pl = s[std::size_t(2 * p)];
    const bench::Stats& rj = s[std::size_t(2 * p + 1)];
    const double q = rj.med / pl.med;
    bench::report("W8", std::string("plain C++ ") + names[p] + " loop, n=" + size, pl,
                  time_text(pl.med / inner) + "/call", std::string("g++ project flags; ") + plain_what[p] + per);
    bench::report("W8", std::string("rune jit(") + names[p] + "), n=" + size, rj,
                  time_text(rj.med / inner) + "/call, " + fmtd("%.2fx the plain loop", q),
                  shape + "; one compiled call, a new result tensor each call; target within 2x: " + verdict(q <= 2.) +
                      per);
  }
}

}  // namespace

int main() {
  check_counter();
  const Topology topo = make_cloth();
  std::printf("# W8 cloth: %d masses (%d x %d), %zu springs, dt %g, k %g, c %g, k_ground %g, %d steps a flight\n", M,
              NX, NY, topo.a.size(), DT, K, DAMPING, K_GROUND, STEPS);
  if (topo.a.size() != 1097) {
    std::printf("# W8 cloth: expected 1097 springs\n");
    return 1;
  }
  const Cloth cloth(topo);
  std::vector<double> force(2 * M);
  const std::vector<double> zero(2 * M, 0.);

  // ---------------- (1), (2) the flight
  const State s0{nx::create(nx::float64, {M, 2}, topo.pos0), nx::zeros(nx::float64, {M, 2})};
  const nx::Tensor k0 = nx::scalar(nx::float64, K);
  const auto flight = rune::jit([&cloth](const State& s, const nx::Tensor& k) { return cloth.flight(s, k); });
  std::vector<double> ppos = topo.pos0, pvel = zero;
  plain_flight(topo, ppos.data(), pvel.data(), force.data(), K);
  State out = flight(s0, k0);
  const std::vector<double> rpos = nx::to_vector<double>(out.pos);
  const double dflight = max_abs_diff(rpos, ppos);
  double lowest = 1e300, highest = -1e300;
  for (int m = 0; m < M; ++m) {
    lowest = std::min(lowest, ppos[std::size_t(2 * m + 1)]);
    highest = std::max(highest, ppos[std::size_t(2 * m + 1)]);
  }
  std::printf("# W8 after %d steps (plain loop): y from %.6f to %.6f (started from %.6f); rune jit(scan): max abs "
              "difference of the final positions %.3g\n",
              STEPS, lowest, highest, LIFT, dflight);
  check(finite(ppos) && finite(pvel) && finite(rpos), "the flight's final state is finite");
  check(dflight <= 1e-9, "rune jit(scan) final positions within 1e-9 of the plain loop's (" + fmtd("%.3g", dflight) + ")");

  std::vector<double> fpos, fvel;
  const std::vector<bench::Stats> fs = bench::measure_rounds(
      3, 3, 1,
      [&] {
        fpos = topo.pos0;
        fvel = zero;
        plain_flight(topo, fpos.data(), fvel.data(), force.data(), K);
        bench::keep(fpos);
      },
      [&] {
        out = flight(s0, k0);
        bench::keep(out);
      });
  const double qf = fs[1].med / fs[0].med;
  const std::string cloth_text = "300 masses, 1097 springs, float64; ";
  bench::report("W8", "plain C++ loop, 1000 steps", fs[0], time_text(fs[0].med / STEPS) + "/step",
                "g++ project flags (-O3 -ffp-contract=off); " + cloth_text +
                    "one pass over the springs (F[a] += f, F[b] -= f), one over the masses; in place");
  bench::report("W8", "rune jit(scan), 1000 steps", fs[1],
                time_text(fs[1].med / STEPS) + "/step, " + fmtd("%.2fx the plain loop", qf),
                cloth_text + "take, segment_sum, where; scan by length; target within 2x: " + verdict(qf <= 2.) +
                    fmtd("; max abs difference of the final positions vs the plain loop %.3g", dflight) +
                    " (target <= 1e-9: " + verdict(dflight <= 1e-9) + ")");

  // ---------------- (3) one frame through Loaded::into on the game's arrays
  {
    std::vector<double> gpos = topo.pos0, gvel = zero, qpos = topo.pos0, qvel = zero;
    double gk = K;
    const State game{nx::borrow(nx::float64, {M, 2}, gpos.data()), nx::borrow(nx::float64, {M, 2}, gvel.data())};
    const nx::Tensor kview = nx::borrow(nx::float64, {}, &gk);
    const auto step = rune::jit([&cloth](const State& s, const nx::Tensor& k) { return cloth.step(s, k); });
    const rune::Loaded<State(State, nx::Tensor)> loaded(step.program(game, kview));
    if (std::getenv("W8_BYTECODE")) std::printf("%s", rune::bytecode(loaded.program()).c_str());
    for (int i = 0; i < 100; ++i) {
      loaded.into(game, game, kview);
      plain_step(topo, qpos.data(), qvel.data(), force.data(), K);
    }
    const double dframe = std::max(max_abs_diff(gpos, qpos), max_abs_diff(gvel, qvel));
    check(dframe <= 1e-9, "100 frames of Loaded::into within 1e-9 of 100 plain steps (" + fmtd("%.3g", dframe) + ")");

    constexpr int FRAMES = 1000;
    for (int i = 0; i < FRAMES; ++i) loaded.into(game, game, kview);  // the steady state
    const long before = test::allocations;
    for (int i = 0; i < FRAMES; ++i) loaded.into(game, game, kview);
    const long allocations = test::allocations - before;
    const double per_frame = double(allocations) / FRAMES;
    std::printf("# W8 Loaded::into steady state: %ld allocations (operator new and the malloc family) over %d frames "
                "= %.3g per frame\n",
                allocations, FRAMES, per_frame);
    check(finite(gpos) && finite(qpos), "the frames' states are finite");

    const std::vector<bench::Stats> s = bench::measure_rounds(
        3, 5, 1,
        [&] {
          for (int i = 0; i < FRAMES; ++i) plain_step(topo, qpos.data(), qvel.data(), force.data(), K);
          bench::keep(qpos);
        },
        [&] {
          for (int i = 0; i < FRAMES; ++i) loaded.into(game, game, kview);
        });
    const double q = s[1].med / s[0].med;
    bench::report("W8", "plain C++ step, one frame", s[0], time_text(s[0].med / FRAMES) + "/frame",
                  "g++ project flags; the same step in place on the game's arrays; 1000 frames per sample");
    bench::report("W8", "rune Loaded::into frame", s[1],
                  time_text(s[1].med / FRAMES) + "/frame, " + fmtd("%.2fx the plain step, ", q) +
                      (test::counting ? fmtd("%.3g allocations/frame", per_frame) : "allocations not counted"),
                  "the step's program in place on the game's arrays (nx::borrow); 1000 frames per sample; "
                  "target within 2x: " + verdict(q <= 2.) + "; target 0 allocations/frame: " +
                      (test::counting ? verdict(allocations == 0) + " (" + std::to_string(allocations) +
                                            " allocations over " + std::to_string(FRAMES) + " frames)"
                                      : std::string("not counted (a sanitizer build)")));
  }

  // ---------------- (4) 64 stiffnesses
  {
    std::vector<double> kv(LANES), bpos, bvel;
    for (int l = 0; l < LANES; ++l) {
      kv[std::size_t(l)] = lane_k(l);
      bpos.insert(bpos.end(), topo.pos0.begin(), topo.pos0.end());
      bvel.insert(bvel.end(), zero.begin(), zero.end());
    }
    const State sb{nx::create(nx::float64, {LANES, M, 2}, bpos), nx::create(nx::float64, {LANES, M, 2}, bvel)};
    const nx::Tensor kb = nx::create(nx::float64, {LANES}, kv);
    std::vector<nx::Tensor> ks;
    for (int l = 0; l < LANES; ++l) ks.push_back(nx::scalar(nx::float64, kv[std::size_t(l)]));
    const auto mapped = rune::jit(rune::vmap([&cloth](const State& s, const nx::Tensor& k) { return cloth.flight(s, k); }));

    std::vector<double> lpos(std::size_t(LANES) * 2 * M), lvel(lpos.size());
    auto plain_all = [&] {
      lpos = bpos;
      lvel = bvel;
      for (int l = 0; l < LANES; ++l)
        plain_flight(topo, lpos.data() + 2 * M * l, lvel.data() + 2 * M * l, force.data(), kv[std::size_t(l)]);
      bench::keep(lpos);
    };
    // Each vmap call takes seconds: the first timed call's results are checked
    // (its key traced beforehand by .program), and the 64 calls are timed
    // once, as they are checked.
    const rune::Program mapped_program = mapped.program(sb, kb);
    if (std::getenv("W8_BYTECODE")) std::printf("%s", rune::bytecode(mapped_program).c_str()), std::fflush(stdout);
    State mb;
    std::vector<double> mapped_t;
    for (int i = 0; i < 2; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      mb = mapped(sb, kb);
      mapped_t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    plain_all();
    const double dmap = max_abs_diff(nx::to_vector<double>(mb.pos), lpos);
    std::vector<State> ends(LANES);
    const auto t0 = std::chrono::steady_clock::now();
    for (int l = 0; l < LANES; ++l) ends[std::size_t(l)] = flight(s0, ks[std::size_t(l)]);
    const double calls_t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> calls_pos;
    for (const State& e : ends) {
      const std::vector<double> p = nx::to_vector<double>(e.pos);
      calls_pos.insert(calls_pos.end(), p.begin(), p.end());
    }
    const double dcalls = max_abs_diff(calls_pos, lpos);
    check(finite(lpos), "the 64 plain flights end finite");
    check(dmap <= 1e-9, "rune jit(vmap(scan)) final positions within 1e-9 of the 64 plain flights' (" +
                            fmtd("%.3g", dmap) + ")");
    check(dcalls <= 1e-9, "64 rune jit(scan) calls within 1e-9 of the 64 plain flights' (" + fmtd("%.3g", dcalls) + ")");

    const std::vector<bench::Stats> s{bench::measure(plain_all, 3, 0), stats_of(mapped_t),
                                      stats_of({calls_t})};
    const double q = s[1].med / s[0].med, q64 = s[2].med / s[0].med;
    const double cloth_steps = double(LANES) * STEPS;
    bench::report("W8", "plain C++ loop, 64 cloths one after another, 1000 steps each", s[0],
                  time_text(s[0].med / cloth_steps) + "/cloth-step",
                  "g++ project flags; stiffness 5e3 .. 2e4, one cloth after another");
    bench::report("W8", "rune jit(vmap(scan)) over 64 stiffnesses, one call", s[1],
                  time_text(s[1].med / cloth_steps) + "/cloth-step, " + fmtd("%.2fx the plain loop", q),
                  "state [64, 300, 2], k [64]; one compiled call (seconds each: 2 calls timed, the last checked); "
                  "target within 2x: " + verdict(q <= 2.) +
                      fmtd("; max abs difference vs the plain loop %.3g", dmap));
    bench::report("W8", "[extra] rune jit(scan), 64 calls one after another", s[2],
                  time_text(s[2].med / cloth_steps) + "/cloth-step, " + fmtd("%.2fx the plain loop", q64),
                  "the flight's compiled call once per stiffness, for reference (timed once, as checked)" +
                      fmtd("; max abs difference vs the plain loop %.3g", dcalls));
  }

  // ---------------- (5) per primitive
  primitives(1097);
  primitives(1000000);

  if (failures) std::printf("# W8 rune: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
