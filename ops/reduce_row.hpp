// The eager reductions' order of combination, shared with the VM's fused
// reductions (vm/fused_kernel.cpp), which must give the same bits.
#pragma once

#include <cstdint>

#include "ops/kernels/iterate.hpp"
#include "ops/primitive.hpp"

namespace nx::ops {

// A row longer than a segment is reduced segment by segment (on oneTBB
// from parallel_grain elements), then the segments' results in order: the
// bits do not depend on the thread count.
inline constexpr std::int64_t reduce_segment = chunk_elements;

// The dtype a reduction of `in` accumulates in, and its segments' partial
// results: float32 for the 16-bit floats (rounded once, at the end), bool
// for all and any, else `in`.
DType accumulator_dtype(Prim p, DType in);

// Reduces the n contiguous elements of dtype `in` at row to one of dtype
// `out` at dst.
void reduce_row(Prim p, DType in, DType out, std::int64_t n, const char* row, char* dst);

// The result at dst, of dtype `out`, of a row of `in` from its `segments`
// partial results (of accumulator_dtype(p, in)) at `partials`.
void combine_segments(Prim p, DType in, DType out, std::int64_t segments, const char* partials, char* dst);

}  // namespace nx::ops
