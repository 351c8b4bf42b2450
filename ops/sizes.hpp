// Checked shape arithmetic: the one place that says which shapes a value may
// have and computes lengths and counts without overflow.
//
// A valid shape has at most `max_rank` axes, no negative length, and holds at
// most `max_elements` elements (so its byte count, strides and offsets fit in
// an int64_t with room to spare). Every shape that reaches a tensor or a
// program's type passes `check_shape`: the creation functions, the result of
// every primitive's type rule (ops::bind, the parser), a construct's outputs,
// a parsed type. Rules that add or multiply lengths given by the user (pad
// widths, concatenated axes, a reshape's -1) use the checked helpers below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rune/dtype.hpp"

namespace nx::ops {

using nx::max_elements;  // (rune/dtype.hpp)
using nx::max_rank;
inline constexpr std::string_view max_elements_text = "2^48";
// "more than 2^48 elements (the most one value may hold)", as the errors say it.
std::string more_than_a_value_holds();

// Why `shape` is not valid ("has a negative length", ...), or nothing.
std::optional<std::string> shape_problem(const Shape& shape);
// Throws "<api>: shape [..] has a negative length" (or names the rank or the
// element count) unless the shape is valid.
void check_shape(std::string_view api, const Shape& shape);

// a + b and a * b of non-negative lengths, or nothing past max_elements.
std::optional<std::int64_t> add_lengths(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> multiply_lengths(std::int64_t a, std::int64_t b);

}  // namespace nx::ops
