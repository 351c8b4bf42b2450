// Sums over axis 0 of P rows as whole-row adds: P - 1 vectorized adds of a
// row rather than a reduction of P elements per column (whose rows would
// first be moved last: a transposing copy). The ranks' sums
// (ops/family_ranks.cpp) keep nx::sum's bits this way; a fold keeps a
// loop's.
#pragma once

#include "ops/primitive.hpp"

namespace nx::ops {

// out (C order, a row's shape) = nx::sum(rows, {0}), bit for bit
// (docs/accuracy.md, "The order of reductions": row i folded into
// accumulator i mod L from +0, then the accumulators combined by halves).
// `rows` (C order) is scratch: its rows are overwritten when P > 1.
void sum_rows_into(const Tensor& rows, const Tensor& out);

// acc (C order, a row's shape) plus rows 0, 1, 2, ... of `rows` (C order)
// in turn: the adds of a loop over the rows, one rounding each (a map's
// lanes adding to a rune::Total, constructs/total.cpp).
void fold_rows_into(const Tensor& rows, const Tensor& acc);

}  // namespace nx::ops
