// Ordering for fusion: a primitive whose results are small (at most
// `small_elements` elements each: an index, a donor lane's element, a
// shape's arithmetic) moves up over the equations with larger results
// before it, to just after the last of its operands, in the program and
// its sub-programs. The VM gathers elementwise primitives of one shape into
// a fused kernel in the program's order, and an elementwise value of another
// shape in between closes the kernel; such values are mostly small ones
// that a large computation needs (the lane an iterate's masked step
// borrows is found, sliced and detached between its two selects), so
// moving them first lets the large values meet in one kernel.
//
// Only primitives move, never over an equation of small results (so the
// small ones keep their order, and constructs, checks and callbacks keep
// theirs); a primitive depends on nothing but its operands, so the values
// and their bits are the same; the moved values live a little longer,
// which costs nothing at their size.
//
// Then an elementwise primitive of a larger result read by one equation
// alone, a later elementwise primitive of the same shape, moves down to
// just before it, so that they meet in one kernel: a structure's leaves
// computed in turn (rune::map_leaves, a tree pmean's divisions) and used
// one by one after. Its operands live longer; its result no longer.
#pragma once

#include <cstdint>

#include "ir/program.hpp"

namespace rune::ir {

inline constexpr std::int64_t small_elements = 64;

Program schedule_for_fusion(const Program& program);

}  // namespace rune::ir
