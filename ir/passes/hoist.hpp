// Loop-invariant code motion: the values of a loop's sub-program (a scan's
// step, an iterate's until and step) that depend only on its captures and
// constants are computed once, before the loop, in the enclosing program,
// and passed in as new captures: new trailing inputs of the loop and
// parameters of the sub-program (an until's before the step's captures);
// the captures it then no longer reads are dropped.
//
// What moves: primitive equations all of whose inputs are captures,
// constants or values of such equations (invariant), and only those that
// a value staying in the loop needs (read by an equation that does not
// move, or returned). Constants do not move on their own (they are loaded
// once already): one that a moved equation reads is copied out with it.
// Nothing else moves: constructs and effects (a check or a callback on
// invariant values runs once per trip as before), the collectives (a map's
// depend on the maps running around the call; the ranks' exchange values
// with other processes as often as the program says), and broadcasts (views the
// loop's fused kernels read as broadcast operands, where a capture would be
// read as a whole tensor). Nor does an elementwise value of more than
// hoisted_elements elements with an operand of that size that the loop
// reads anyway (`x * x - lane` beside `lane * 1e-12`): in a loop over
// memory that does not fit the caches, reading such a value each trip costs
// more than computing it in the kernel that reads its operand.
//
// Inner loops first: what an inner loop's sub-program hoists lands in the
// outer loop's, and moves on out when it is invariant there too.
//
// A moved equation runs even when its loop does not (a scan of no rows, an
// iterate whose until holds at once): that is safe because no primitive
// throws on values of its checked types (errors of types are found when
// the program is traced), and it changes no bits (the same eager rule on
// the same values). An until runs at least once, so what it hoists is
// never extra work.
#pragma once

#include <cstdint>

#include "ir/program.hpp"

namespace rune::ir {

inline constexpr std::int64_t hoisted_elements = std::int64_t(1) << 16;

Program hoist_loop_invariants(const Program& program);

}  // namespace rune::ir
