// Indices read in place: the row an index names (take, scatter_add and the
// dynamic slices read their indices in their own dtype, never copied), and
// the gathers and scatters of rows by index that `take`, `scatter_add` and
// the VM's fused kernels run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/kernels/kernels.hpp"
#include "ops/primitive.hpp"

namespace nx::ops {

inline constexpr std::size_t no_row = std::numeric_limits<std::size_t>::max();

// The row of an axis of `length` rows that index i names. Clamp (length >
// 0: the type rule refuses indices into an empty axis): a negative index
// counts from the end, then every index is clamped into the axis (an
// unsigned one past int64's range is past every axis: the last row). Drop:
// an index outside [0, length) names no row (no_row), every index of an
// empty axis.
template <IndexMode Mode, class I> std::size_t row_of(I i, std::size_t length) {
  if constexpr (std::is_signed_v<I>) {
    if (i >= 0) return std::size_t(i) < length ? std::size_t(i) : Mode == IndexMode::drop ? no_row : length - 1;
    if (Mode == IndexMode::drop) return no_row;
    const std::int64_t from_end = std::int64_t(i) + std::int64_t(length);
    return from_end < 0 ? 0 : std::size_t(from_end);
  } else {
    return std::uint64_t(i) < length ? std::size_t(i) : Mode == IndexMode::drop ? no_row : length - 1;
  }
}

[[noreturn]] void throw_not_an_index(DType dtype);

// Calls f with a value of the C++ type of an integer dtype (the dtypes an
// index may have).
template <class F> void with_index_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::int8: return f(std::int8_t{});
    case DType::int16: return f(std::int16_t{});
    case DType::int32: return f(std::int32_t{});
    case DType::int64: return f(std::int64_t{});
    case DType::uint8: return f(std::uint8_t{});
    case DType::uint32: return f(std::uint32_t{});
    case DType::uint64: return f(std::uint64_t{});
    default: throw_not_an_index(dtype);
  }
}

// Rows [first, first + count) of a gather: row k is the row of `operand`
// (`length` rows of `row_bytes` bytes) that index k of `indices` names,
// written at to + (k - first) * row_bytes; zeros where it names none.
using GatherRows = void (*)(char* to, const char* operand, const void* indices, std::size_t first,
                            std::size_t count, std::size_t length, std::size_t row_bytes);
// The loop for indices of `index` dtype (typed moves for rows of 1, 2, 4, 8
// and 16 bytes: a call to memcpy per row would cost more than the copy).
GatherRows gather_rows(DType index, IndexMode mode, std::size_t row_bytes);

// Adds rows [first, first + count) of a scatter's updates (`updates` at row
// `first`; rows of `row` elements, `row_bytes` bytes) into the rows of `out`
// (`length` of them) their indices name, in the order of the indices, as
// `add` (add's row loop) computes out + update; none where an index names
// no row.
using ScatterRows = void (*)(char* out, const char* updates, const void* indices, std::size_t first,
                             std::size_t count, std::size_t length, std::size_t row, std::size_t row_bytes,
                             kernels::BinaryRow add);
// The loop for indices of `index` dtype and values of `value` dtype in
// rows of `row` elements: float32 and float64 rows added inline (IEEE
// addition: add's bits; rows of 1 to 4 elements unrolled, `row` then fixed),
// the others through `add` (which rounds 16-bit floats, adds complex parts).
ScatterRows scatter_rows(DType index, IndexMode mode, DType value, std::size_t row);

// Rows [first, first + count) of prim(a's row, b's row), the rows of `a`
// (`length_a` rows) and of `b` (`length_b` rows) that index k of
// `indices_a` and `indices_b` name, as two gathers and the primitive's row
// loop would give them (a row of zeros where a drop-mode index names none),
// rows of `row` elements written at to + (k - first) * row: the gathered rows
// are read in place, never copied. For add, sub and mul of float32 and
// float64 (IEEE arithmetic: the row loop's bits) with indices of int32 or
// int64, the same dtype and mode on both sides; null for the rest.
using PairedRows = void (*)(char* to, const char* a, const void* indices_a, std::size_t length_a, const char* b,
                            const void* indices_b, std::size_t length_b, std::size_t first, std::size_t count,
                            std::size_t row);
PairedRows paired_rows(Prim prim, DType value, DType index, IndexMode mode, std::size_t row);

}  // namespace nx::ops
