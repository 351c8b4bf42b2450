#include "second_order.hpp"

#include <cmath>

#include <rune/grad.hpp>

#include "functions.hpp"

namespace gen {

using nx::Tensor;

std::string check_second_order(const Case& c, const Objective& J, Rng& rng) {
  if (!std::isfinite(nx::item(J(c.args)))) return {};
  const std::vector<Tensor> v = random_direction(c, rng), u = random_direction(c, rng);
  auto gradient = [&J](const std::vector<Tensor>& y) { return rune::grad(J, y); };
  auto along_u = [&](const std::vector<Tensor>& y) { return inner_product(rune::grad(J, y), u); };
  const double forward = inner(rune::jvp(gradient, c.args, v).second, u);
  const double reverse = inner(rune::grad(along_u, c.args), v);
  if (!agree(forward, reverse, 1e-7))
    return "second order: forward over reverse gives " + std::to_string(forward) + ", reverse over reverse " +
           std::to_string(reverse);
  const DifferenceCheck d = compare_with_differences(
      [&](const std::vector<Tensor>& y) { return nx::item(along_u(y)); }, c.args, v, forward, 1e-5);
  return d.failure.empty() ? d.failure : "second order along two directions: " + d.failure;
}

}  // namespace gen
