// The demo's physics: a ball shot from a cannon flies through wind with
// drag, steered by a small thruster whose thrust is planned step by step.
// It is plain C++ over nx tensors; rune traces it, compiles it,
// differentiates it and maps it over many winds.
#pragma once

#include <rune/rune.hpp>

#include <utility>

namespace flight {

using nx::Tensor;

constexpr int steps = 200;  // explicit Euler steps of dt seconds: a 2 s flight
constexpr double dt = 0.01;
constexpr double gravity = 9.81;  // m/s^2
constexpr double drag = 0.02;     // quadratic drag: a deceleration of drag * |air speed|^2, per metre
constexpr double effort = 1e-3;   // what the loss charges per (m/s^2)^2 s of thrust

// The scenario, in metres and metres per second (x forward, y up).
constexpr double muzzle_vx = 10, muzzle_vy = 10;
constexpr double headwind = 4;
constexpr double target_x = 18, target_y = 2;
constexpr double landing_zone = 1;  // a flight ending within this many metres of the target lands

// A ball in flight: float64 scalars (0-d tensors, which compiled code keeps
// in registers).
struct Ball {
  Tensor x, y, vx, vy;
};
RUNE_TREE(Ball, x, y, vx, vy);

// The two components of a vector: scalars for the wind of one step, [steps]
// for a plan's thrust or a flight's path.
struct Vector {
  Tensor x, y;
};
RUNE_TREE(Vector, x, y);

// A wind, float64 [2]: the headwind.
Tensor nominal_wind();

// One step of dt: gravity, drag against the air (the ball's velocity
// relative to the wind) and this step's thrust (an acceleration).
Ball step(const Ball& ball, const Vector& thrust, const Vector& wind);

// The whole flight from the muzzle at (0, 0): thrust is float64 [2, steps]
// (the x row, then the y row: one column a step), wind float64 [2]. Gives
// the ball at the end and its path: its position after each step.
std::pair<Ball, Vector> fly(const Tensor& thrust, const Tensor& wind);

// What the plan minimizes: the squared distance from the target at the end
// of the flight, plus effort times the thrust's energy (sum of |thrust|^2 dt).
Tensor loss(const Tensor& thrust, const Tensor& wind);

// How far (x, y) is from the target.
double miss(double x, double y);

}  // namespace flight
