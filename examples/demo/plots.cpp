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

svg::Plot flight_plot(const std::string& title) {
  svg::Plot plot(title, "x (m)", "height (m)");
  plot.equal_scale();
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

void loss_curve(const std::string& file, const std::vector<double>& losses) {
  svg::Plot plot("The loss while Adam plans the thrust", "optimizer step", "log10(loss)");
  std::vector<double> steps, logs;
  for (std::size_t i = 0; i < losses.size(); ++i) steps.push_back(double(i)), logs.push_back(std::log10(losses[i]));
  plot.line(std::move(steps), std::move(logs), planned_style);
  plot.save(file);
}

void fan(const std::string& file, const flight::Vector& paths, const flight::Vector& planned) {
  const std::int64_t winds = paths.x.shape()[0];
  svg::Plot plot = flight_plot("The planned flight in " + std::to_string(winds) + " gusty winds (rune::vmap)");
  for (std::int64_t i = 0; i < winds; ++i)  // (the first in the legend for all)
    add_path(plot, nx::get(paths.x, i), nx::get(paths.y, i), {"#1f77b4", 1, 0.35}, i == 0 ? "in a gusty wind" : "");
  add_path(plot, planned.x, planned.y, {"#ff7f0e", 2.5}, "in the headwind planned for");
  plot.save(file);
}

}  // namespace plots
