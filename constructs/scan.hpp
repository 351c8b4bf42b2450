// rune::scan's rules that live in files of their own: differentiation
// (scan_derivatives.cpp) and batching (scan_batching.cpp). The rest, and
// its entry in the construct table, are in scan.cpp.
#pragma once

#include <span>
#include <vector>

#include "ir/construct.hpp"

namespace rune::constructs {

// Forward mode: a scan of the step's JVP, carrying a tangent for every float
// carry and for the xs and captures that have one. Linearization: the step's
// JVP split into a primal step that also emits the residuals its tangent
// operations read (stacked by the scan), and a linear step over the
// tangents and one row of residuals, run as a second scan recorded in the
// linear program.
std::vector<nx::Tensor> scan_jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs);

// A scan running backward over the stacked residuals and output
// cotangents, whose step is the transposed linear step; the cotangents of
// the captures accumulate in its carry.
std::vector<nx::Tensor> scan_transpose(const ir::Equation& eq, std::span<const nx::Tensor> inputs,
                                       std::span<const ir::TensorType> input_types,
                                       std::span<const nx::Tensor> output_cotangents);

// One scan for every lane: only what is batched is batched (an unbatched
// carry stays so until a batched value flows into it).
std::vector<nx::Tensor> scan_batched(batch::BatchTrace& trace, const ir::Equation& eq,
                                     std::span<const nx::Tensor> inputs);

}  // namespace rune::constructs
