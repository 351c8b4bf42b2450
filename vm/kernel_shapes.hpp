// How an operand's shape repeats along a fused kernel's shape: the rows and
// columns a kernel reads in place, spread over its blocks (FusedKernel::Source).
#pragma once

#include <cstdint>

#include <boost/container/small_vector.hpp>

#include "rune/tensor.hpp"

namespace rune::vm {

// The length of the rows an operand of shape `operand` repeats along a
// kernel of shape `kernel`: its axes, past leading 1s, are the kernel's
// trailing ones (a bias added to each row of a matrix). 0 when it is not
// such a row.
std::int64_t row_of_operand(const nx::Shape& operand, const nx::Shape& kernel);

// The length of the rows whose elements one element of `operand` is
// repeated over, along a kernel of shape `kernel`: its axes, right-aligned
// with the kernel's, are the kernel's leading ones then 1s (a value per
// row of a matrix, `x - nx::max(x, {1}, true)`). 0 when it is not such a
// column.
std::int64_t column_of_operand(const nx::Shape& operand, const nx::Shape& kernel);

// The rows a broadcast operand runs the kernel in: a row's or a column's.
std::int64_t repeat_of_operand(const nx::Shape& operand, const nx::Shape& kernel);

// The strides along a kernel of shape `kernel` of an operand of shape
// `operand` broadcast to it, in elements of its C-order elements: the
// operand's axes right-aligned with the kernel's, 0 along an axis it is
// broadcast along.
boost::container::small_vector<std::int64_t, 6> broadcast_strides(const nx::Shape& operand, const nx::Shape& kernel);

}  // namespace rune::vm
