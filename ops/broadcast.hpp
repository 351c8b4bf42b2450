// NumPy broadcasting of shapes and of strides.
#pragma once

#include <optional>
#include <string_view>

#include "rune/tensor.hpp"

namespace nx::ops {

// The broadcast of two shapes, or nothing when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// The strides that show t with shape `to` (t's shape must broadcast to it).
detail::Strides broadcast_strides(const detail::TensorImpl& t, const Shape& to);
// Whether `from` broadcasts to exactly `to`.
bool broadcasts_to(const Shape& from, const Shape& to);

}  // namespace nx::ops
