// What rune::vmap (rune/vmap.hpp) needs from batch/, without exposing traces.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::detail {

// The number of lanes of a map over these leaves (named by their paths):
// the common length of their axis 0. Throws the API's errors
// ("rune::vmap: 1: 3 rows along axis 0, 0: 2").
std::int64_t lane_count_of(std::span<const std::string> paths, std::span<const nx::Tensor> leaves);

// A map in progress: while it lives, the values it gives are one lane's
// view of values computed for every lane at once.
class Mapping {
 public:
  // `axis`: the map's name (rune::Axis's id), 0 for none.
  Mapping(std::string_view entry_point, std::int64_t lanes, std::uint64_t axis);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  // Each leaf's lanes (along axis 0) as one lane's value.
  std::vector<nx::Tensor> inputs(std::span<const nx::Tensor> leaves);
  // Ends the map: each output's lanes stacked along axis 0 (an output the
  // same in every lane broadcast).
  std::vector<nx::Tensor> finish(std::span<const nx::Tensor> outputs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A fresh name for a map.
std::uint64_t fresh_axis();

}  // namespace rune::detail
