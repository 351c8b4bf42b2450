#include "plots.hpp"

#include <cmath>
#include <utility>

#include "svg.hpp"

namespace plots {

namespace {

const svg::Style planned_style{"#1f77b4", 2.5};

// A path (components [steps]) as a line from the muzzle at (0, 0).
void add_path(svg::Plot& plot, const nx::Tensor& x, const nx::Tensor& y, const svg::Style& style,
              const std::string& label = "") {
  std::vector<double> xs = nx::to_vector<double>(x), ys = nx::to_vector<double>(y);
  xs.insert(xs.begin(), 0.), ys.insert(ys.begin(), 0.);
  plot.line(std::move(xs), std::move(ys), style, label);
}

// The scene every flight is drawn in: the ground (height 0, from behind the
// muzzle to past the target), the target and its landing zone.
svg::Plot flight_plot(const std::string& title) {
  svg::Plot plot(title, "x (m)", "height (m)");
  plot.equal_scale();
  plot.line({-1., flight::target_x + 3.}, {0., 0.}, {"#8c564b", 3}, "ground");
  std::vector<double> xs, ys;
  for (int i = 0; i <= 64; ++i) {
    const double angle = 2 * M_PI * i / 64;
    xs.push_back(flight::target_x + flight::landing_zone * std::cos(angle));
    ys.push_back(flight::target_y + flight::landing_zone * std::sin(angle));
  }
  plot.line(std::move(xs), std::move(ys), {"#d62728", 1.5, 1, true}, "landing zone");
  plot.marker(flight::target_x, flight::target_y, "#d62728", "target");
  return plot;
}

}  // namespace

void flights(const std::string& file, const flight::Vector& unplanned, const flight::Vector& planned) {
  svg::Plot plot = flight_plot("The cannon ball in a headwind, before and after planning its thrust");
  add_path(plot, unplanned.x, unplanned.y, {"#7f7f7f", 2, 1, true}, "no thrust");
  add_path(plot, planned.x, planned.y, planned_style, "planned thrust");
  plot.save(file);
}

void thrust(const std::string& file, const nx::Tensor& plan) {
  svg::Plot plot("The planned thrust, step by step", "time (s)", "thrust (m/s^2)");
  std::vector<double> times;
  for (int i = 0; i < flight::steps; ++i) times.push_back(i * flight::dt);
  plot.line({0., flight::steps * flight::dt}, {0., 0.}, {"#7f7f7f", 1});
  plot.line(times, nx::to_vector<double>(nx::get(plan, 0)), planned_style, "forward (x)");
  plot.line(times, nx::to_vector<double>(nx::get(plan, 1)), {"#ff7f0e", 2.5}, "up (y)");
  plot.save(file);
}

void loss_curve(const std::string& file, const std::vector<double>& losses) {
  svg::Plot plot("The loss while Adam plans the thrust", "optimizer step", "log10(loss)");
  std::vector<double> steps, logs;
  for (std::size_t i = 0; i < losses.size(); ++i) steps.push_back(double(i)), logs.push_back(std::log10(losses[i]));
  plot.line(std::move(steps), std::move(logs), planned_style);
  plot.save(file);
}

void fan(const std::string& file, const flight::Vector& paths, const flight::Vector& planned, int landed) {
  const std::int64_t winds = paths.x.shape()[0];
  svg::Plot plot = flight_plot("The planned flight in " + std::to_string(winds) + " gusty winds (rune::vmap): " +
                               std::to_string(landed) + " land in the zone");
  for (std::int64_t i = 0; i < winds; ++i)  // (the first in the legend for all)
    add_path(plot, nx::get(paths.x, i), nx::get(paths.y, i), {"#1f77b4", 1, 0.35}, i == 0 ? "in a gusty wind" : "");
  add_path(plot, planned.x, planned.y, {"#ff7f0e", 2.5}, "in the headwind planned for");
  plot.save(file);
}

}  // namespace plots
