// The demo: a differentiable simulation. A cannon ball is steered through a
// headwind by a thrust planned for each of its 200 steps (flight.hpp, plain
// C++ over nx tensors). rune compiles the flight, differentiates it to plan
// the thrust, checks that gradient against finite differences, flies the
// plan through 64 winds at once, saves the compiled flight and loads it
// back; the figures are SVG files.
//
//   demo [--short] [--out DIR]
//
// --short runs a few optimizer steps and short timings (the tests' mode);
// the figures go to DIR (default demo-plots).
#include <rune/rune.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flight.hpp"
#include "plots.hpp"

using nx::Tensor;

namespace {

struct Options {
  bool short_run = false;
  std::filesystem::path out = "demo-plots";
};

// How many optimizer steps and timed calls the run makes.
struct Budget {
  int optimizer_steps, report_every, timed_calls;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Times are medians: a call the machine's other work interrupted does not
// count more than one that ran through.
double median(std::vector<double> times) {
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

// The median seconds per call of f over `calls` calls, after one untimed
// call (a compiled function traces and compiles on its first).
template <class F> double seconds_per_call(F f, int calls) {
  f();
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    const Clock::time_point start = Clock::now();
    f();
    times.push_back(seconds_since(start));
  }
  return median(times);
}

std::string duration(double seconds) {
  char text[32];
  if (seconds < 1e-3) std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  else if (seconds < 1) std::snprintf(text, sizeof text, "%.2f ms", seconds * 1e3);
  else std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

// The loss as a function of the plan alone, in the given wind.
auto loss_in(const Tensor& wind) {
  return [wind](const Tensor& thrust) { return flight::loss(thrust, wind); };
}

// How far the ball lands from the target.
double distance_from_target(const flight::Ball& ball) { return flight::miss(nx::item(ball.x), nx::item(ball.y)); }

// 1. The flight, traced once into a program and compiled.
template <class Fly>
void compile_flight(const Fly& fly, const Tensor& thrust, const Tensor& wind, const Budget& budget) {
  std::printf("1. The flight, compiled (rune::scan of the step, rune::jit of the flight)\n");
  const std::string text = rune::to_string(fly.program(thrust, wind));
  std::printf("   traced once: %d steps are one scan, in a program of %d lines\n", flight::steps,
              int(std::count(text.begin(), text.end(), '\n')));
  const double eager = seconds_per_call([&] { return flight::fly(thrust, wind); }, budget.timed_calls / 10 + 1);
  const double compiled = seconds_per_call([&] { return fly(thrust, wind); }, budget.timed_calls);
  std::printf("   eager: %s per %d-step flight; compiled: %s per flight\n", duration(eager).c_str(), flight::steps,
              duration(compiled).c_str());
}

// 2. The thrust planned by Adam on the gradient rune::grad computes through
// the whole flight. Gives the plan and the loss before each step.
std::pair<Tensor, std::vector<double>> plan_thrust(const Tensor& wind, const Budget& budget) {
  std::printf("\n2. Planning the thrust: rune::grad through the flight, rune::optim::adam, one compiled step\n");
  const auto adam = rune::optim::adam(0.1);
  auto train = rune::jit([&](const Tensor& thrust, const rune::optim::AdamState<Tensor>& state) {
    auto [loss, gradient] = rune::value_and_grad(loss_in(wind), thrust);
    auto [next, next_state] = adam.update(gradient, state, thrust);
    return std::tuple{loss, next, next_state};
  });
  Tensor thrust = nx::zeros(nx::float64, {2, flight::steps});
  auto state = adam.init(thrust);
  std::vector<double> losses, times;
  for (int i = 0; i <= budget.optimizer_steps; ++i) {
    const Clock::time_point start = Clock::now();
    Tensor loss;
    std::tie(loss, thrust, state) = train(thrust, state);
    losses.push_back(nx::item(loss));
    times.push_back(seconds_since(start));
    if (i % budget.report_every != 0) continue;
    // The first call traces the step and compiles it; each later line gives
    // the median time of the steps since the line before.
    const std::string time = i == 0 ? "(trace, compile and run: " + duration(times[0]) + ")"
                                    : duration(median(times)) + " per step";
    std::printf("   step %4d  loss %10.6f  %s\n", i, losses.back(), time.c_str());
    times.clear();
  }
  return {thrust, losses};
}

// 3. The gradient rune computed (the adjoint of 200 steps nobody wrote)
// against central differences, entry by entry, at a random plan. Gives
// whether they agree.
bool check_adjoint(const Tensor& wind, const Budget& budget) {
  std::printf("\n3. The adjoint rune wrote, against central differences, at a random plan\n");
  const Tensor thrust = nx::random::normal(nx::random::key(3), nx::float64, {2, flight::steps});
  auto loss = rune::jit(loss_in(wind));
  auto gradient = rune::jit(rune::grad(loss_in(wind)));

  const std::vector<double> adjoint = nx::to_vector<double>(gradient(thrust));
  const double adjoint_seconds = seconds_per_call([&] { return gradient(thrust); }, budget.timed_calls / 10 + 1);

  // d loss / d u_i ~ (loss(u + h e_i) - loss(u - h e_i)) / 2h: two flights
  // per entry. The loss (~30) is computed with a rounding error of ~1e-13,
  // which the quotient divides by h, and the entries are at most ~0.1, so h
  // is large for a difference; the truncation error (of order h^2) stays
  // smaller still.
  const double h = 1e-2;
  std::vector<double> u = nx::to_vector<double>(thrust), differences;
  auto loss_at = [&] { return nx::item(loss(nx::create(nx::float64, thrust.shape(), u))); };
  loss_at();  // (traces and compiles)
  const Clock::time_point start = Clock::now();
  for (double& entry : u) {
    const double saved = entry;
    entry = saved + h;
    const double above = loss_at();
    entry = saved - h;
    const double below = loss_at();
    entry = saved;
    differences.push_back((above - below) / (2 * h));
  }
  const double differences_seconds = seconds_since(start);

  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < adjoint.size(); ++i) {
    largest = std::max(largest, std::fabs(differences[i]));
    worst = std::max(worst, std::fabs(adjoint[i] - differences[i]));
  }
  const double relative = worst / largest;
  std::printf("   rune::grad: %zu entries in one forward and backward pass: %s\n", adjoint.size(),
              duration(adjoint_seconds).c_str());
  std::printf("   central differences: %zu compiled flights: %s\n", 2 * adjoint.size(),
              duration(differences_seconds).c_str());
  const bool agree = relative < 1e-6;
  std::printf("   largest difference / largest entry: %.1e: they %s\n", relative, agree ? "agree" : "DISAGREE");
  return agree;
}

struct Gusts {
  flight::Vector paths;  // components [winds, steps]
  int landed = 0;        // flights ending in the landing zone
};

// 4. The plan flown in many winds at once: rune::vmap of the flight over
// the winds' axis, compiled.
template <class Fly>
Gusts fly_in_gusts(const Fly& fly, const Tensor& thrust, const Tensor& wind, const Budget& budget) {
  constexpr int lanes = 64;
  std::printf("\n4. The plan in %d gusty winds at once (rune::vmap)\n", lanes);
  // Each wind is the headwind plus a gust of 1.5 m/s (standard deviation) on each axis.
  const Tensor winds = wind + nx::random::normal(nx::random::key(4), nx::float64, {lanes, 2}) * 1.5;
  auto fly_all = rune::jit([](const Tensor& u, const Tensor& ws) {
    return rune::vmap([&](const Tensor& w) { return flight::fly(u, w); })(ws);
  });
  const double mapped = seconds_per_call([&] { return fly_all(thrust, winds); }, budget.timed_calls / 10 + 1);
  const double one_by_one = seconds_per_call([&] {
    for (std::int64_t i = 0; i < lanes; ++i) fly(thrust, nx::get(winds, i));
  }, budget.timed_calls / 100 + 1);
  std::printf("   %d flights in one mapped, compiled call: %s (%d compiled calls one by one: %s)\n", lanes,
              duration(mapped).c_str(), lanes, duration(one_by_one).c_str());
  const auto [ends, paths] = fly_all(thrust, winds);
  const std::vector<double> xs = nx::to_vector<double>(ends.x), ys = nx::to_vector<double>(ends.y);
  int landed = 0;
  for (int i = 0; i < lanes; ++i) landed += flight::miss(xs[i], ys[i]) < flight::landing_zone;
  std::printf("   %d of %d land within %.0f m of the target\n", landed, lanes, flight::landing_zone);
  return {paths, landed};
}

// 5. The compiled flight saved as a program and loaded back: a game runs it
// without the C++ that traced it (docs/embedding.md).
template <class Fly>
void save_and_load(const Fly& fly, const Tensor& thrust, const Tensor& wind, const std::filesystem::path& file) {
  std::printf("\n5. The compiled flight, saved and loaded back (rune::save_program, rune::load)\n");
  rune::save_program(fly.program(thrust, wind), file);
  auto loaded = rune::load<std::pair<flight::Ball, flight::Vector>(Tensor, Tensor)>(file);
  const flight::Ball there = loaded(thrust, wind).first, compiled = fly(thrust, wind).first;
  const bool same = nx::item(there.x) == nx::item(compiled.x) && nx::item(there.y) == nx::item(compiled.y);
  std::printf("   %s: lands at (%.3f, %.3f), %s\n", file.c_str(), nx::item(there.x), nx::item(there.y),
              same ? "the same bits as the compiled flight" : "NOT the compiled flight's bits");
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--short") options.short_run = true;
    else if (arg == "--out" && i + 1 < argc) options.out = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--short] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  const Budget budget = options.short_run ? Budget{40, 10, 100} : Budget{400, 50, 2000};
  const Clock::time_point start = Clock::now();
  std::printf("rune demo: a cannon ball steered through a %.0f m/s headwind by a thrust for each of its %d steps\n"
              "(%d numbers to plan) to land on a target %.0f m away. Times are medians of repeated calls.\n\n",
              flight::headwind, flight::steps, 2 * flight::steps, flight::target_x);

  const Tensor wind = flight::nominal_wind();
  const Tensor no_thrust = nx::zeros(nx::float64, {2, flight::steps});
  auto fly = rune::jit(flight::fly);
  compile_flight(fly, no_thrust, wind, budget);
  const auto [thrust, losses] = plan_thrust(wind, budget);
  std::printf("   the plan lands %.3f m from the target (without thrust: %.2f m)\n",
              distance_from_target(fly(thrust, wind).first), distance_from_target(fly(no_thrust, wind).first));
  const bool agree = check_adjoint(wind, budget);
  const Gusts gusts = fly_in_gusts(fly, thrust, wind, budget);
  const std::filesystem::path out = std::filesystem::absolute(options.out);
  std::filesystem::create_directories(out);
  save_and_load(fly, thrust, wind, out / "flight.rune");

  std::printf("\n6. Figures (SVG, for a browser)\n");
  const std::filesystem::path figures[] = {out / "flights.svg", out / "thrust.svg", out / "loss.svg",
                                           out / "gusts.svg"};
  const flight::Vector planned = fly(thrust, wind).second;
  plots::flights(figures[0], fly(no_thrust, wind).second, planned);
  plots::thrust(figures[1], thrust);
  plots::loss_curve(figures[2], losses);
  plots::fan(figures[3], gusts.paths, planned, gusts.landed);
  for (const std::filesystem::path& figure : figures) std::printf("   %s\n", figure.c_str());
  std::printf("\ndone in %s\n", duration(seconds_since(start)).c_str());
  return agree ? 0 : 1;
}
