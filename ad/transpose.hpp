// Transposition of a linear program: from cotangents of its results, the
// cotangents of its linear parameters.
#pragma once

#include <span>
#include <vector>

#include "ir/program.hpp"

namespace rune::ad {

// `params` gives each parameter of the program: a fixed value (a residual),
// or an undefined handle for a linear parameter. Returns the cotangent of
// each linear parameter (undefined for fixed ones). Cotangents accumulate
// as the sum of their contributions, the first taken as it is (no zero is
// ever added, so -0 survives); a parameter that receives none gets +0.
// Transpose rules are nx calls, so the backward pass runs under whatever
// traces are active (it is staged by jit, differentiated by an outer grad).
std::vector<nx::Tensor> transpose(const ir::Program& linear, std::span<const nx::Tensor> params,
                                  std::span<const nx::Tensor> result_cotangents);

}  // namespace rune::ad
