// Collectives over a named axis (API.md, "Collectives over named axes"):
// inside rune::vmap(f, a), each lane computes with the values of every lane
// of the map named `a`; with rune::ranks(), each process of an MPI job with
// every process's. Over a map they are written with rune::lanes, over the
// ranks they are primitives of their own (ops/family_ranks.cpp); either way
// they differentiate (psum's transpose is psum, ppermute's the inverse
// permutation, broadcast_from's a sum to the root), nest in maps, compile
// and save like any program, and a sum gives the same bits over P ranks as
// over P lanes.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "rune/nx.hpp"
#include "rune/tree.hpp"
#include "rune/vmap.hpp"

namespace rune {

// The sum of x over the lanes of the map named `a`, the same in every lane:
// the lanes summed in nx::sum's fixed order (docs/accuracy.md), whatever
// the SIMD width.
nx::Tensor psum(Axis a, nx::Operand x);
// psum divided by the lane count.
nx::Tensor pmean(Axis a, nx::Operand x);
// Every lane's x stacked on a new axis 0 (rune::lanes).
nx::Tensor all_gather(Axis a, nx::Operand x);
// Each lane's x sent to another: a pair (from, to) gives lane `to` the x of
// lane `from`; a lane no pair names as a receiver gets zeros. Throws when a
// lane is named twice as a receiver or is outside the axis.
nx::Tensor ppermute(Axis a, nx::Operand x, std::span<const std::pair<std::int64_t, std::int64_t>> pairs);
// The x of lane `root`, in every lane.
nx::Tensor broadcast_from(Axis a, nx::Operand x, std::int64_t root);

namespace detail {
// The leaves' sums over the ranks, the same bits as leaf by leaf: the small
// leaves (under 64 KiB) of each dtype laid end to end and summed in one
// exchange (as Horovod fuses small tensors), each larger leaf alone. `api`
// names the errors.
std::vector<nx::Tensor> psum_leaves_over_ranks(const char* api, std::span<const nx::Tensor> leaves);
}  // namespace detail

// psum and pmean of every tensor leaf of a structure (a gradient's tree):
// over a map's lanes each leaf is its own sum; over the ranks the small
// leaves of one dtype go in one exchange.
template <class T>
  requires(detail::Structures<T> && !std::convertible_to<const T&, nx::Tensor>)
T psum(Axis a, const T& tree) {
  if (a == ranks()) return rebuild(tree, detail::psum_leaves_over_ranks("rune::psum", leaves(tree)));
  return map_leaves(tree, [&](const nx::Tensor& leaf) { return psum(a, leaf); });
}
template <class T>
  requires(detail::Structures<T> && !std::convertible_to<const T&, nx::Tensor>)
T pmean(Axis a, const T& tree) {
  if (a != ranks()) return map_leaves(tree, [&](const nx::Tensor& leaf) { return pmean(a, leaf); });
  const T sums = rebuild(tree, detail::psum_leaves_over_ranks("rune::pmean", leaves(tree)));
  return map_leaves(sums, [&](const nx::Tensor& sum) { return sum / double(lane_count(a)); });
}

}  // namespace rune
