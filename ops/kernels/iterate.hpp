// Walking the elements of strided operands in C order, in blocks.
//
// The shape is first coalesced (size-1 axes dropped, adjacent axes merged
// where every operand's strides allow), so contiguous operands become one
// long row. The flat index space is cut into fixed chunks of `chunk`
// elements; above `grain` elements the chunks run on oneTBB. The cut does not
// depend on the thread count, so neither do the results.
#pragma once

#include <array>
#include <cstdint>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "rune/dtype.hpp"
#include "rune/tensor.hpp"

namespace nx::ops {

inline constexpr std::int64_t chunk_elements = 1 << 15;
inline constexpr std::int64_t parallel_grain = 1 << 17;

template <int N> struct Layout {
  Shape shape;                       // coalesced
  std::array<detail::Strides, N> strides;  // per operand, in elements
};

template <int N> Layout<N> coalesce(const Shape& shape, const std::array<const detail::Strides*, N>& strides) {
  Layout<N> out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !out.shape.empty();
    for (int k = 0; k < N && merge; ++k) merge = out.strides[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      out.shape.back() *= shape[d];
      for (int k = 0; k < N; ++k) out.strides[k].back() = (*strides[k])[d];
    } else {
      out.shape.push_back(shape[d]);
      for (int k = 0; k < N; ++k) out.strides[k].push_back((*strides[k])[d]);
    }
  }
  if (out.shape.empty()) {  // a scalar, or only size-1 axes
    out.shape.push_back(1);
    for (int k = 0; k < N; ++k) out.strides[k].push_back(0);
  }
  return out;
}

// Calls row(offsets, n, inner_strides) over the flat range [begin, end):
// offsets are per operand, in elements, of the row's first element.
template <int N, class Row>
void walk_range(const Layout<N>& L, std::int64_t begin, std::int64_t end, Row& row) {
  const int nd = int(L.shape.size());
  const std::int64_t inner = L.shape[nd - 1];
  Shape idx(nd, 0);
  std::int64_t rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rest % L.shape[d];
    rest /= L.shape[d];
  }
  std::array<std::int64_t, N> off{}, step{};
  for (int k = 0; k < N; ++k) {
    for (int d = 0; d < nd; ++d) off[k] += idx[d] * L.strides[k][d];
    step[k] = L.strides[k][nd - 1];
  }
  std::int64_t pos = begin;
  while (pos < end) {
    std::int64_t n = std::min(inner - idx[nd - 1], end - pos);
    row(off, n, step);
    pos += n;
    if (pos >= end) break;
    // advance to the next row: the inner index wraps, outer ones carry
    for (int k = 0; k < N; ++k) off[k] -= idx[nd - 1] * step[k];
    idx[nd - 1] = 0;
    for (int d = nd - 2; d >= 0; --d) {
      for (int k = 0; k < N; ++k) off[k] += L.strides[k][d];
      if (++idx[d] < L.shape[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= L.strides[k][d] * L.shape[d];
      idx[d] = 0;
    }
  }
}

template <int N, class Row>
void walk(const Shape& shape, const std::array<const detail::Strides*, N>& strides, Row row) {
  std::int64_t total = numel(shape);
  if (total == 0) return;
  Layout<N> L = coalesce<N>(shape, strides);
  if (total < parallel_grain) {
    walk_range<N>(L, 0, total, row);
    return;
  }
  std::int64_t chunks = (total + chunk_elements - 1) / chunk_elements;
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, chunks, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        Row local = row;
        for (std::int64_t c = r.begin(); c < r.end(); ++c)
          walk_range<N>(L, c * chunk_elements, std::min(total, (c + 1) * chunk_elements), local);
      },
      tbb::simple_partitioner());
}

}  // namespace nx::ops
