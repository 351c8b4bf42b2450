// Transposition of a linear program: from cotangents of its results, the
// cotangents of its linear parameters.
#pragma once

#include <span>
#include <vector>

#include "ir/program.hpp"

namespace rune::ad {

// `linear` holds the first `linear_count` parameters of the program; the
// others take the fixed values `fixed` (residuals). Cotangents accumulate
// as the sum of their contributions, the first taken as it is (no zero is
// ever added, so -0 survives); a parameter that receives none gets +0.
// Transpose rules are nx calls, so the backward pass runs under whatever
// traces are active (it is staged by jit, differentiated by an outer grad).
std::vector<nx::Tensor> transpose(const ir::Program& linear, std::size_t linear_count,
                                  std::span<const nx::Tensor> fixed, std::span<const nx::Tensor> result_cotangents);

}  // namespace rune::ad
