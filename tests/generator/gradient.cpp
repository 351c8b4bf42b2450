#include "gradient.hpp"

#include <cmath>

#include <rune/grad.hpp>

#include "checks.hpp"
#include "objective.hpp"
#include "second_order.hpp"

namespace gen {

namespace {

using nx::Tensor;

// Along v, where J is finite (a NaN or infinite objective says nothing):
// forward mode gives <gradient, v> too, and so do central differences.
std::string compare_direction(const Objective& J, const std::vector<Tensor>& x, const std::vector<Tensor>& g,
                              const std::vector<Tensor>& v, GradientCheck& out) {
  const auto [value, tangent] = rune::jvp(J, x, v);
  if (!std::isfinite(nx::item(value))) {
    ++out.inconclusive;
    return {};
  }
  const double analytic = inner(g, v), forward = nx::item(tangent);
  if (!agree(forward, analytic, 1e-8))
    return "along a direction, rune::jvp gives " + std::to_string(forward) + ", the gradient " + std::to_string(analytic);
  const DifferenceCheck d =
      compare_with_differences([&](const std::vector<Tensor>& y) { return nx::item(J(y)); }, x, v, analytic, 1e-6);
  ++(d.conclusive ? out.conclusive : out.inconclusive);
  return d.failure.empty() ? d.failure : "the gradient along a direction is " + d.failure;
}

// The objective over the case's program loaded from its text differentiates
// to the same bits (the same primitives are bound in the same order); a
// program holding C++ code (an nx::check) has no text to load.
std::string check_loaded_gradient(const Objective& J, const std::vector<Tensor>& x, const std::vector<Tensor>& g) {
  const rune::Program traced = rune::program(J, x);
  if (!has_text(traced.ir())) return {};
  const rune::Program loaded = rune::parse_program(rune::to_string(traced));
  auto run_loaded = [&loaded](const std::vector<Tensor>& y) { return rune::run(loaded, y)[0]; };
  std::string found = compare_bits(g, rune::grad(run_loaded, x));
  return found.empty() ? found : "the gradient of the loaded program differs: " + found;
}

}  // namespace

GradientCheck check_gradient(const Case& c) {
  Rng rng(c.seed ^ 0x9e3779b97f4a7c15ull);
  const Objective J = objective_of(c, rng);
  GradientCheck out;
  const std::vector<Tensor> g = rune::grad(J, c.args);
  const Function grad_of_J = [&J](const std::vector<Tensor>& args) { return rune::grad(J, args); };
  if (std::string found = check_function(grad_of_J, c.args, g, &out.traced); !found.empty()) {
    out.failure = "the gradient: " + found + "\nits program:\n" + rune::to_string(out.traced);
    return out;
  }
  if (std::string found = check_loaded_gradient(J, c.args, g); !found.empty()) {
    out.failure = found;
    return out;
  }
  for (int k = 0; k < 2 && out.failure.empty(); ++k)
    out.failure = compare_direction(J, c.args, g, random_direction(c, rng), out);
  if (out.failure.empty()) out.failure = check_second_order(c, J, rng);
  return out;
}

}  // namespace gen
