// A scan under a map: one scan whose step computes every lane at once.
#pragma once

#include "batch/batch_trace.hpp"

namespace rune::batch {

// The scan `eq` over `inputs` (values of `trace` or the same in every lane).
// Only what is batched is batched: a carry that starts the same in every
// lane stays unbatched until the step makes it differ (found by a fixpoint:
// the step is traced again with that carry batched).
std::vector<nx::Tensor> scan_batched(BatchTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs);

}  // namespace rune::batch
