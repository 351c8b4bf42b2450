#include "ops/sizes.hpp"

#include <algorithm>

#include "ops/errors.hpp"

namespace nx::ops {

std::optional<std::int64_t> add_lengths(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0 || a > max_elements || b > max_elements - a) return std::nullopt;
  return a + b;
}

std::optional<std::int64_t> multiply_lengths(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0 || a > max_elements || b > max_elements) return std::nullopt;
  if (a != 0 && b > max_elements / a) return std::nullopt;
  return a * b;
}

std::string more_than_a_value_holds() {
  return "more than " + std::string(max_elements_text) + " elements (the most one value may hold)";
}

std::optional<std::string> shape_problem(const Shape& shape) {
  if (shape.size() > max_rank)
    return "has rank " + std::to_string(shape.size()) + ", more than " + std::to_string(max_rank);
  // The product of the nonzero lengths bounds every stride and offset, so it
  // is limited even when a zero length leaves the value empty.
  std::optional<std::int64_t> extent = 1;
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) return std::string("has a negative length");
    empty = empty || d == 0;
    if (extent && d != 0) extent = multiply_lengths(*extent, d);
  }
  if (extent) return std::nullopt;
  if (empty) return "is too large: its nonzero lengths multiply to more than " + std::string(max_elements_text);
  return "holds " + more_than_a_value_holds();
}

void check_shape(std::string_view api, const Shape& shape) {
  // (at a glance: up to three lengths below 2^16 multiply to less than
  // max_elements; every eager operation's result is checked here)
  static_assert(std::int64_t(1) << 48 <= max_elements);
  if (shape.size() <= 3 && std::all_of(shape.begin(), shape.end(), [](std::int64_t d) { return std::uint64_t(d) < 65536; }))
    return;
  if (auto problem = shape_problem(shape)) fail(api, "shape " + to_string(shape) + " " + *problem);
}

}  // namespace nx::ops
