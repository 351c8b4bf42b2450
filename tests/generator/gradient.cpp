#include "gradient.hpp"

#include <cmath>

#include <rune/grad.hpp>

#include "checks.hpp"
#include "evaluate.hpp"
#include "rng.hpp"
#include "values.hpp"

namespace gen {

namespace {

using nx::Tensor;

std::vector<Tensor> random_like(Rng& rng, const std::vector<Type>& types) {
  std::vector<Tensor> out;
  for (const Type& t : types) out.push_back(random_tensor(rng, t, true));
  return out;
}

struct Objective {
  const Block& block;
  std::vector<Tensor> weights;
  Tensor operator()(const std::vector<Tensor>& args) const {
    std::vector<Tensor> results = evaluate(block, args);
    Tensor total = nx::scalar(nx::float64, 0.);
    for (std::size_t i = 0; i < results.size(); ++i) total = total + nx::sum(results[i] * weights[i]);
    return total;
  }
};

double inner(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double total = 0;
  for (std::size_t i = 0; i < a.size(); ++i) total += nx::item(nx::sum(a[i] * b[i]));
  return total;
}

// (J(x + h v) - J(x - h v)) / 2h
double difference(const Objective& J, const std::vector<Tensor>& x, const std::vector<Tensor>& v, double h) {
  auto at = [&](double s) {
    std::vector<Tensor> moved;
    for (std::size_t i = 0; i < x.size(); ++i) moved.push_back(x[i] + v[i] * s);
    return nx::item(J(moved));
  };
  return (at(h) - at(-h)) / (2 * h);
}

// Forward mode along v gives <gradient, v> too (both NaN is agreement).
std::string check_forward(double forward, double analytic) {
  const bool agree = (std::isnan(forward) && std::isnan(analytic)) ||
                     std::fabs(forward - analytic) <= 1e-8 * std::max({1., std::fabs(forward), std::fabs(analytic)});
  if (agree) return {};
  return "along a direction, rune::jvp gives " + std::to_string(forward) + ", the gradient " + std::to_string(analytic);
}

// Differences at h and h/2 that disagree mark a kink (or a jump) near x:
// nothing can be concluded there. Where they agree, the gradient must match
// the finer one within its truncation error, which is about a third of
// their disagreement.
std::string check_differences(const Objective& J, const std::vector<Tensor>& x, const std::vector<Tensor>& v,
                              double analytic, GradientCheck& out) {
  const double h = 1e-5, coarse = difference(J, x, v, h), fine = difference(J, x, v, h / 2);
  const double scale = std::max({1., std::fabs(fine), std::fabs(analytic)});
  if (!std::isfinite(coarse) || !std::isfinite(fine) || std::fabs(coarse - fine) > 1e-4 * scale) {
    ++out.inconclusive;
    return {};
  }
  ++out.conclusive;
  if (std::fabs(analytic - fine) <= 1e-6 * scale + std::fabs(coarse - fine)) return {};
  return "the gradient along a direction is " + std::to_string(analytic) + ", central differences give " +
         std::to_string(fine) + " (h = 5e-6) and " + std::to_string(coarse) + " (h = 1e-5)";
}

// Along v, where J is finite (a NaN or infinite objective says nothing).
std::string compare_direction(const Objective& J, const std::vector<Tensor>& x, const std::vector<Tensor>& g,
                              const std::vector<Tensor>& v, GradientCheck& out) {
  const auto [value, tangent] = rune::jvp(J, x, v);
  if (!std::isfinite(nx::item(value))) {
    ++out.inconclusive;
    return {};
  }
  const double analytic = inner(g, v);
  if (std::string found = check_forward(nx::item(tangent), analytic); !found.empty()) return found;
  return check_differences(J, x, v, analytic, out);
}

}  // namespace

GradientCheck check_gradient(const Case& c) {
  Rng rng(c.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<Type> results, params(c.function.types.begin(), c.function.types.begin() + c.function.params);
  for (int r : c.function.results) results.push_back(c.function.types[std::size_t(r)]);
  const Objective J{c.function, random_like(rng, results)};
  GradientCheck out;
  const std::vector<Tensor> g = rune::grad(J, c.args);
  const Function grad_of_J = [&J](const std::vector<Tensor>& args) { return rune::grad(J, args); };
  if (std::string found = check_function(grad_of_J, c.args, g, &out.traced); !found.empty()) {
    out.failure = "the gradient: " + found + "\nits program:\n" + rune::to_string(out.traced);
    return out;
  }
  for (int k = 0; k < 2 && out.failure.empty(); ++k)
    out.failure = compare_direction(J, c.args, g, random_like(rng, params), out);
  return out;
}

}  // namespace gen
