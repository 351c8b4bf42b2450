// Collectives over a named map's lanes (API.md, "Collectives over named
// axes"): inside rune::vmap(f, a), each lane computes with the values of
// every lane of the map named `a`. Written with rune::lanes, so every
// transformation sees through them: they differentiate (psum's transpose is
// psum, ppermute's the inverse permutation, broadcast_from's a sum to the
// root), nest in other maps, compile and save like any program. Across MPI
// processes (rune::ranks()) they are not built yet (docs/maps.md).
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <utility>

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

// psum and pmean of every tensor leaf of a structure (a gradient's tree);
// in one process each leaf is its own sum.
template <class T>
  requires(detail::Structures<T> && !std::convertible_to<const T&, nx::Tensor>)
T psum(Axis a, const T& tree) {
  return map_leaves(tree, [&](const nx::Tensor& leaf) { return psum(a, leaf); });
}
template <class T>
  requires(detail::Structures<T> && !std::convertible_to<const T&, nx::Tensor>)
T pmean(Axis a, const T& tree) {
  return map_leaves(tree, [&](const nx::Tensor& leaf) { return pmean(a, leaf); });
}

}  // namespace rune
