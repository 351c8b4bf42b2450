// The demo: a differentiable simulation. A ball is thrown through air with
// drag; rune::scan runs 100 explicit Euler steps, rune::grad differentiates
// the landing error through all of them, and gradient descent finds the
// launch velocity that hits a target.
#include <rune/rune.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

using nx::Tensor;

struct Ball {
  Tensor position, velocity;  // float64 [2]: x, y
};
RUNE_TREE(Ball, position, velocity);

namespace {

constexpr double dt = 0.02, drag = 0.05;

// One Euler step: gravity and quadratic drag. The wind of each step is a row
// of the scanned input.
std::pair<Ball, std::tuple<>> step(const Ball& b, const Tensor& wind) {
  Tensor air = b.velocity - wind;
  Tensor speed = nx::sqrt(nx::sum(air * air));
  Tensor gravity = nx::create(nx::float64, {2}, {0., -9.81});
  Tensor accel = gravity - air * speed * drag;
  return {Ball{b.position + b.velocity * dt, b.velocity + accel * dt}, {}};
}

Tensor landing_error(const Tensor& launch, const Tensor& winds, const Tensor& target) {
  Ball start{nx::zeros(nx::float64, {2}), launch};
  Ball end = rune::scan(step, start, winds).first;
  Tensor miss = end.position - target;
  return nx::sum(miss * miss);
}

}  // namespace

int main() {
  Tensor winds = nx::broadcast_to(nx::create(nx::float64, {1, 2}, {-2., 0.}), {100, 2});
  Tensor target = nx::create(nx::float64, {2}, {12., 0.5});
  Tensor launch = nx::create(nx::float64, {2}, {5., 5.});

  auto loss = [&](const Tensor& v) { return landing_error(v, winds, target); };
  const std::string text = rune::to_string(rune::program(loss, launch));
  std::printf("traced once: the 100 steps are one scan in a program of %d lines\n",
              int(std::count(text.begin(), text.end(), '\n')));
  for (int i = 0; i <= 60; ++i) {
    auto [error, g] = rune::value_and_grad(loss, launch);
    if (i % 15 == 0) std::printf("iteration %2d: landing error %.6f\n", i, nx::item(error));
    launch = launch - g * 0.05;
  }
  std::printf("launch velocity (%.3f, %.3f) m/s\n", nx::item(launch, {0}), nx::item(launch, {1}));
  std::cout << (rune::check_grads(loss, launch) ? "gradients agree with central differences\n"
                                                : "gradients differ from central differences\n");
}
