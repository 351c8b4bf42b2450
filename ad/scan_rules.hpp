// The differentiation rules of rune::scan (TRANSFORMS.md, "Constructs are
// primitives with sub-programs"):
// - forward mode: a scan of the step's JVP, carrying a tangent for every
//   float carry and for the xs and captures that have one;
// - linearization: the step's JVP split into a primal step that also emits
//   the residuals its tangent operations read (stacked by the scan), and a
//   linear step over the tangents and one row of residuals, run as a second
//   scan recorded in the linear program;
// - transposition: a scan running backward over the stacked residuals and
//   output cotangents, whose step is the transposed linear step; the
//   cotangents of the captures accumulate in its carry.
#pragma once

#include <span>
#include <vector>

#include "ad/jvp_trace.hpp"

namespace rune::ad {

std::vector<nx::Tensor> scan_jvp(JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs);

// The cotangents of a linear scan's inputs (undefined for the fixed ones,
// given in `inputs`; linear ones are undefined there) from its outputs'.
std::vector<nx::Tensor> scan_transpose(const ir::Equation& eq, std::span<const nx::Tensor> inputs,
                                       std::span<const ir::TensorType> input_types,
                                       std::span<const nx::Tensor> output_cotangents);

}  // namespace rune::ad
