// nx::random: counter-based random numbers (docs/nx.md, "Random numbers").
//
// A key is a uint32 [2] tensor, an ordinary value: it flows through
// rune::jit, rune::scan and rune::vmap (under a map, a batched key gives one
// stream per lane). The same key gives the same bits eagerly, compiled and
// on every thread count. Use a key once: split it for more keys, or draw
// from it.
#pragma once

#include <cstdint>

#include "rune/tensor.hpp"

namespace nx::random {

// uint32 [2]: (seed div 2^32, seed mod 2^32).
Tensor key(std::uint64_t seed);
// uint32 [n, 2]: n keys made from key's stream.
Tensor split(Operand key, std::int64_t n = 2);
// uint32 [shape]: the words of key's stream (Threefry-2x32-20), in C order.
Tensor bits(Operand key, const Shape& shape);
// Uniform in [lo, hi), dtype a real float: lo + (hi - lo) u with u in [0, 1)
// from the top mantissa-width bits of the stream.
Tensor uniform(Operand key, DType dtype, const Shape& shape, double lo = 0., double hi = 1.);
// Standard normal (mean 0, variance 1), by Box-Muller, dtype a real float.
Tensor normal(Operand key, DType dtype, const Shape& shape);

}  // namespace nx::random
