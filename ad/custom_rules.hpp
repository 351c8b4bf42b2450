// Differentiating a function with a custom rule (an ir custom equation):
// forward mode and linearization of custom_jvp apply its tangent map;
// linearization of custom_vjp traces its pullback into a program, recorded
// as a linear call (the values the pullback reads become residuals).
#pragma once

#include <span>
#include <vector>

#include "ad/jvp_trace.hpp"

namespace rune::ad {

std::vector<nx::Tensor> custom_jvp(JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs);

}  // namespace rune::ad
