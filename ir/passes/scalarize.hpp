// Small tensors as scalars: a value of a few elements (a `float64 [3]`
// state, a quaternion, a 2 x 2 matrix) is computed as its elements, one 0-d
// value each, which the VM keeps in scalar registers: no tensor, no call,
// no allocation. A Lorenz step written over a `float64 [3]` state with
// nx::get and nx::stack then runs as the same scalar code as one written
// over three scalars.
//
// Which values: of a static shape of 1 to `max_elements` elements
// (not 0-d: those are scalars already), on the host, of a dtype a scalar
// register holds (every real dtype and complex64). Such a value is split
// into its elements (its parts, in C order) when it is
//   - a constant;
//   - computed by an elementwise primitive, reshape, broadcast, slice,
//     transpose, flip or concatenate, or by a float32 or float64 sum,
//     product, max or min (in the order of docs/accuracy.md, "The order of
//     reductions", so the bits are eager's), from operands that are split
//     or 0-d (a reduction or reshape to 0-d of a split value is computed
//     from its parts too);
//   - a carry of a scan or an iterate whose step gives it back split (the
//     loop then carries its parts: more carries), or a capture of such a
//     loop that its sub-program reads on parts (its parts are taken once,
//     before the loop).
// Anything else reading a split value (a matmul, a take, a callback, a
// result of the program) reads it whole, put back together where it is
// first needed (selects under one-hot masks: one fused kernel). A value
// whose parts nothing reads (nor a split result) is not split. A loop's
// scanned rows (xs) and stacked results are not split.
//
// The bits do not change: every element of an elementwise result is
// computed by the same per-element code whatever its position
// (ops/kernels/simd.hpp), and a reduction's parts are combined in eager's
// order. Run by ir::simplify_loops, before hoisting, so only on what the
// VM runs: a traced call's program (what differentiation sees) keeps its
// tensors.
#pragma once

#include <cstdint>

#include "ir/program.hpp"

namespace rune::ir {

// The most elements of a value split into scalars by default
// (JitOptions::scalar_elements): 8 covers 2-, 3- and 4-vectors and 2 x 2
// matrices; larger values stay tensors, where one fused kernel step over all
// elements costs less than a scalar instruction each.
inline constexpr std::int64_t default_scalar_elements = 8;

Program scalarize_small_values(const Program& program, std::int64_t max_elements = default_scalar_elements);

}  // namespace rune::ir
