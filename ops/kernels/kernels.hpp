// The kernel table: row loops per primitive and dtype, filled once for the
// machine's SIMD level (ops/kernels/README.md).
//
// A row loop computes n elements of a fresh contiguous output from operands
// given as (pointer to the first element, element stride). A stride of 0
// broadcasts one element; any other stride (negative ones too) is gathered.
#pragma once

#include <cstdint>

#include "ops/primitive.hpp"

namespace nx::ops::kernels {

using UnaryRow = void (*)(std::int64_t n, const void* a, std::int64_t sa, void* out);
using BinaryRow = void (*)(std::int64_t n, const void* a, std::int64_t sa, const void* b,
                           std::int64_t sb, void* out);
using SelectRow = void (*)(std::int64_t n, const void* cond, std::int64_t sc, const void* a,
                           std::int64_t sa, const void* b, std::int64_t sb, void* out);
// Reduces n contiguous elements to one, written to *out.
using ReduceRow = void (*)(std::int64_t n, const void* in, void* out);
// A reduction in pieces, as a fused fused kernel reduces its blocks while it
// computes them: start puts the identity in `state` (reduce_state_bytes,
// aligned to 64), add folds n contiguous elements into it, finish writes
// the result. Pieces whose lengths, all but the last's, are multiples of
// reduce_piece give the bits of the ReduceRow over the whole row (which is
// start, add and finish over one piece). `partial` writes the result
// before its rounding to the element type, in the accumulators' dtype
// (float32 for 16-bit floats: nx::ops::accumulator_dtype), for a long
// row's segments.
struct ReducePieces {
  void (*start)(void* state) = nullptr;
  void (*add)(std::int64_t n, const void* in, void* state) = nullptr;
  void (*finish)(const void* state, void* out) = nullptr;
  void (*partial)(const void* state, void* out) = nullptr;
};
inline constexpr std::int64_t reduce_piece = 64;
inline constexpr std::size_t reduce_state_bytes = 256;
// `rows` contiguous rows of n elements each reduced to one, with the bits
// of the pieces over each row, for rows of at most short_row_elements
// (2 to 32 elements: the accumulators of one row, loops.hpp). One scalar
// loop at every instruction set (the order of a reduction is the same at
// every one), for float32 and float64 sums, products, maxima and minima.
using ShortRows = void (*)(std::int64_t rows, std::int64_t n, const void* in, void* out);
// Index of the first maximum (minimum) of n elements with stride s; NaN wins.
using ArgRow = std::int32_t (*)(std::int64_t n, const void* in, std::int64_t s);

// Results of at least this many bytes use the streaming loops (where there
// are: the SIMD float32/float64 ones): they store past the caches.
inline constexpr std::size_t streaming_bytes = std::size_t(8) << 20;

struct Table {
  UnaryRow unary[prim_count][dtype_count] = {};
  BinaryRow binary[prim_count][dtype_count] = {};
  UnaryRow unary_streaming[prim_count][dtype_count] = {};  // null: use unary
  BinaryRow binary_streaming[prim_count][dtype_count] = {};
  SelectRow select[dtype_count] = {};
  UnaryRow convert[dtype_count][dtype_count] = {};  // [from][to]
  ReduceRow reduce[prim_count][dtype_count] = {};
  ReducePieces reduce_pieces[prim_count][dtype_count] = {};
  ShortRows short_rows[prim_count][dtype_count] = {};
  std::int64_t short_row_elements[dtype_count] = {};
  ArgRow arg[prim_count][dtype_count] = {};
  const char* arch = "generic";
};

// The table for this machine: portable loops, then the SIMD ones of the best
// instruction set the processor has.
const Table& table();

void fill_portable(Table& t);
#if defined(__x86_64__)
void fill_sse2(Table& t);
void fill_avx2(Table& t);
void fill_avx512(Table& t);
#elif defined(__aarch64__)
void fill_neon(Table& t);
#endif

}  // namespace nx::ops::kernels
