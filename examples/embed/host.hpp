// The game's side of the embedding example: it loads the saved step, keeps
// the chain's state in its own arrays, and runs the step on them every
// frame, in place, with no copy and no allocation.
#pragma once

#include <filesystem>
#include <span>
#include <vector>

#include <rune/rune.hpp>

#include "chain.hpp"

namespace chain {

class Host {
 public:
  // The state starts at rest, the chain straight between its anchors.
  Host(const std::filesystem::path& step_file, std::size_t masses)
      : step_(rune::load<State(State, nx::Tensor)>(step_file)),
        position_(masses, 0.),
        velocity_(masses, 0.),
        dt_(frame_dt),
        state_{nx::borrow(nx::float64, {std::int64_t(masses)}, position_.data()),
               nx::borrow(nx::float64, {std::int64_t(masses)}, velocity_.data())},
        dt_view_(nx::borrow(nx::float64, {}, &dt_)) {}

  // One fixed step: the results are written over the state they came from.
  void frame() { step_.into(state_, state_, dt_view_); }

  std::span<const double> position() const { return position_; }

 private:
  rune::Loaded<State(State, nx::Tensor)> step_;
  std::vector<double> position_, velocity_;
  double dt_;
  State state_;  // borrows position_ and velocity_
  nx::Tensor dt_view_;
};

}  // namespace chain
