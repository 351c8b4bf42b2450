// The world of the embedding example: a chain of masses on springs, hung
// between two fixed anchors, falling under gravity and settling. Its step
// is written once over tensors (traced, saved, loaded and run by the game)
// and once as a plain C++ loop (the baseline the frame overhead is measured
// against: the same arithmetic, in the same order, so the same bits).
#pragma once

#include <cstddef>

#include <rune/rune.hpp>

namespace chain {

struct State {
  nx::Tensor position, velocity;  // float64 [masses]: each mass's height
};
RUNE_TREE(State, position, velocity);

inline constexpr double stiffness = 2000., damping = 2., gravity = 9.81;
inline constexpr double frame_dt = 1. / 120.;

// Semi-implicit Euler: the springs pull each mass toward its neighbours
// (the anchors, at height 0, beyond the ends).
inline State step(const State& s, const nx::Tensor& dt) {
  const std::int64_t n = s.position.shape()[0];
  nx::Tensor padded = nx::pad(s.position, {{1, 1}});
  nx::Tensor left = nx::slice(padded, {0}, {n}), right = nx::slice(padded, {2}, {n + 2});
  nx::Tensor force = stiffness * (left + right - 2. * s.position) - damping * s.velocity - gravity;
  nx::Tensor velocity = s.velocity + force * dt;
  return {s.position + velocity * dt, velocity};
}

// The same step on plain arrays, in place.
inline void step_plain(double* position, double* velocity, std::size_t n, double dt) {
  double left = 0.;  // the previous mass's height before this step
  for (std::size_t i = 0; i < n; ++i) {
    const double right = i + 1 < n ? position[i + 1] : 0.;
    const double force = stiffness * (left + right - 2. * position[i]) - damping * velocity[i] - gravity;
    left = position[i];
    velocity[i] = velocity[i] + force * dt;
    position[i] = position[i] + velocity[i] * dt;
  }
}

}  // namespace chain
