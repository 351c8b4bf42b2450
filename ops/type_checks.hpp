// Checks shared by the type rules of the primitive families.
#pragma once

#include <span>

#include "ops/errors.hpp"
#include "ops/primitive.hpp"

namespace nx::ops {

// Throws "<api>: <dtype> <shape> is not supported (it takes ...)" unless the
// primitive accepts the operand's dtype.
void check_accepts(Prim p, const Tensor& operand);
// The same check for a composite over p, its error naming the composite.
void check_accepts(std::string_view api, Prim p, const Tensor& operand);
// (of an operand of dtype d, named in the message as `subject`)
void check_accepts(std::string_view api, Prim p, DType d, const std::string& subject);
// Throws unless every operand has the dtype of the first.
void check_same_dtype(Prim p, std::span<const Tensor> operands);
// Throws when an operand is an undefined handle.
void check_defined(std::string_view api, std::span<const Tensor> operands);
// The result dtype of p for operands of dtype d.
DType result_dtype(Prim p, DType d, const Params& params);
// The type of a gather over `count` lanes (or ranks): x's, after a leading
// axis of `count`; and of its transpose, a sum of one row per lane: x's
// without that axis (throws "...: a transposed gather takes one row per
// <row> (4), got float64 [3]" when x's leading axis is not `count` long).
TensorType gathered_type(Prim p, const Tensor& x, std::int64_t count);
TensorType row_sum_type(Prim p, const Tensor& x, std::int64_t count, std::string_view row);
// The dtype sum and prod accumulate in by default: NumPy's, so that a sum
// of small integers does not wrap (int8 values add up in int64).
DType accumulation_dtype(DType d);
// An axis in [-ndim, ndim) made non-negative; throws naming the tensor.
std::int64_t normalize_axis(std::string_view api, std::int64_t axis, std::int64_t ndim, const Tensor& t);
// Normalized, sorted, distinct axes; empty means all.
Axes normalize_axes(std::string_view api, const Axes& axes, const Tensor& t);

}  // namespace nx::ops
