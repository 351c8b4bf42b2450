#include "flight.hpp"

#include <cmath>

namespace flight {

namespace {
Vector components(const Tensor& t) { return {nx::get(t, 0), nx::get(t, 1)}; }
}  // namespace

Tensor nominal_wind() { return nx::create(nx::float64, {2}, {-headwind, 0.}); }

Ball step(const Ball& ball, const Vector& thrust, const Vector& wind) {
  const Tensor air_x = ball.vx - wind.x, air_y = ball.vy - wind.y;
  const Tensor air_speed = nx::sqrt(air_x * air_x + air_y * air_y);
  const Tensor ax = thrust.x - air_x * air_speed * drag;
  const Tensor ay = thrust.y - air_y * air_speed * drag - gravity;
  return {ball.x + ball.vx * dt, ball.y + ball.vy * dt, ball.vx + ax * dt, ball.vy + ay * dt};
}

std::pair<Ball, Vector> fly(const Tensor& thrust, const Tensor& wind) {
  const Tensor zero = nx::scalar(nx::float64, 0);
  const Ball muzzle{zero, zero, nx::scalar(nx::float64, muzzle_vx), nx::scalar(nx::float64, muzzle_vy)};
  const Vector air = components(wind);
  // rune::scan traces the step once and runs it for each step's thrust (the
  // rows of the two [steps] components): the carry is the ball, and each
  // step's output is its new position.
  return rune::scan(
      [&](const Ball& ball, const Vector& push) {
        Ball next = step(ball, push, air);
        return std::pair{next, Vector{next.x, next.y}};
      },
      muzzle, components(thrust));
}

Tensor loss(const Tensor& thrust, const Tensor& wind) {
  const Ball end = fly(thrust, wind).first;
  const Tensor dx = end.x - target_x, dy = end.y - target_y;
  return dx * dx + dy * dy + nx::sum(thrust * thrust) * (effort * dt);
}

double miss(double x, double y) { return std::hypot(x - target_x, y - target_y); }

}  // namespace flight
