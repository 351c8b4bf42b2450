// Small helpers shared by the unit tests.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include <rune/nx.hpp>

namespace test {

inline std::vector<double> values(const nx::Tensor& t) { return nx::to_vector<double>(t); }
inline std::string text(const nx::Tensor& t) { return nx::to_string(t); }

inline std::uint64_t bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Creates a float64 tensor: f64({2, 2}, {1, 2, 3, 4}).
inline nx::Tensor f64(const nx::Shape& shape, std::initializer_list<double> v) {
  return nx::create(nx::float64, shape, v);
}

}  // namespace test

using Catch::Matchers::StartsWith;
using Catch::Matchers::Contains;
