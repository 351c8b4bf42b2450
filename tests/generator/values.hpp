// Random elements for arguments, constants and double operands: ordinary
// values, ties and halves (for rounding and max), and in bit-exact cases the
// edges (NaN with payloads, infinities, signed zeros, subnormals, integer
// extremes). Gradient cases draw smooth values only.
#pragma once

#include "description.hpp"
#include "rng.hpp"

namespace gen {

nx::Tensor random_tensor(Rng& rng, const Type& type, bool smooth);
double random_scalar(Rng& rng, bool smooth);
// Indices into an axis of length n for take and the dynamic slices: mostly
// in [-n, n), sometimes beyond (they are clamped).
nx::Tensor random_indices(Rng& rng, nx::DType dtype, const nx::Shape& shape, std::int64_t n);

}  // namespace gen
