// The sum over axis 0 of P rows with nx::sum's bits, as whole-row adds: the
// ranks' sums (ops/family_ranks.cpp) add one row per rank this way, P - 1
// vectorized adds of a row rather than a reduction of P elements per
// column (whose rows would first be moved last: a transposing copy).
#pragma once

#include "ops/primitive.hpp"

namespace nx::ops {

// out (C order, a row's shape) = nx::sum(rows, {0}), bit for bit
// (docs/accuracy.md, "The order of reductions": row i folded into
// accumulator i mod L from +0, then the accumulators combined by halves).
// `rows` (C order) is scratch: its rows are overwritten when P > 1.
void sum_rows_into(const Tensor& rows, const Tensor& out);

}  // namespace nx::ops
