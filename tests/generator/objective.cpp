#include "objective.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "evaluate.hpp"
#include "values.hpp"

namespace gen {

using nx::Tensor;

Tensor Objective::operator()(const std::vector<Tensor>& args) const {
  return inner_product(evaluate(block, args), weights);
}

Objective objective_of(const Case& c, Rng& rng) {
  Objective J{c.function, {}};
  for (int r : c.function.results) J.weights.push_back(random_tensor(rng, c.function.types[std::size_t(r)], true));
  return J;
}

std::vector<Tensor> random_direction(const Case& c, Rng& rng) {
  std::vector<Tensor> v;
  for (const Tensor& x : c.args) v.push_back(random_tensor(rng, Type{x.dtype(), x.shape()}, true));
  return v;
}

Tensor inner_product(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  Tensor total = nx::scalar(nx::float64, 0.);
  for (std::size_t i = 0; i < a.size(); ++i) total = total + nx::sum(a[i] * b[i]);
  return total;
}

double inner(const std::vector<Tensor>& a, const std::vector<Tensor>& b) { return nx::item(inner_product(a, b)); }

bool agree(double a, double b, double tolerance) {
  return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= tolerance * std::max({1., std::fabs(a), std::fabs(b)});
}

namespace {

// (f(x + h v) - f(x - h v)) / 2h, how far the rounding of f's two
// values (a few ulps each) may move it, and their mean.
struct Difference {
  double slope, rounding, mean;
};
Difference difference(const ScalarFunction& f, const std::vector<Tensor>& x, const std::vector<Tensor>& v, double h) {
  auto at = [&](double s) {
    std::vector<Tensor> moved;
    for (std::size_t i = 0; i < x.size(); ++i) moved.push_back(x[i] + v[i] * s);
    return f(moved);
  };
  const double a = at(h), b = at(-h);
  return {(a - b) / (2 * h), 8 * std::numeric_limits<double>::epsilon() * std::max(std::fabs(a), std::fabs(b)) / (2 * h),
          (a + b) / 2};
}

}  // namespace

DifferenceCheck compare_with_differences(const ScalarFunction& f, const std::vector<Tensor>& x,
                                         const std::vector<Tensor>& v, double derivative, double tolerance) {
  const double h = 1e-5;
  const Difference at_h = difference(f, x, v, h), at_half = difference(f, x, v, h / 2);
  const double coarse = at_h.slope, fine = at_half.slope;
  const double scale = std::max({1., std::fabs(fine), std::fabs(derivative)});
  if (!std::isfinite(coarse) || !std::isfinite(fine) || std::fabs(coarse - fine) > 1e-4 * scale ||
      at_half.rounding > tolerance * scale)
    return {};
  // f at x itself off its neighbours' mean: x sits on a kink of its own (a
  // stop or a branch decided by a tie at exactly x, as mean(|[x, x, x]|) > x
  // by a rounding), which both step sizes straddle alike.
  const double at_x = f(x);
  if (!(std::fabs(at_x - at_half.mean) <= 1e-4 * std::max(1., std::fabs(at_x)))) return {};
  if (std::fabs(derivative - fine) <= tolerance * scale + std::fabs(coarse - fine)) return {true, {}};
  return {true, std::to_string(derivative) + ", central differences give " + std::to_string(fine) +
                    " (h = 5e-6) and " + std::to_string(coarse) + " (h = 1e-5)"};
}

}  // namespace gen
