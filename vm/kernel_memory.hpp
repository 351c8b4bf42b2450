// The memory of one fused kernel: the block buffers of its temporaries, its
// streamed results, the operands it fetches a block ahead.
#pragma once

#include <cstddef>

#include "vm/code.hpp"

namespace rune::vm {

// Gives the kernel's temporaries their block buffers (FusedKernel::buffers:
// shared where their lives do not overlap), its slots their places
// (FusedKernel::places, spread, gathered, block_bytes, rows_bytes), its results the streaming
// loops when it writes more than streaming_threshold() bytes, and its steps
// their shares of the next block's lines to fetch (FusedKernel::fetched,
// fetch_lines).
void plan_kernel_memory(FusedKernel& m);

// The bytes a fused kernel writes beyond which its results stream past the
// caches: half the last-level cache (results that would not stay there, as
// glibc's memcpy decides), at least the eager kernels' streaming_bytes.
// Smaller results are fetched into the caches a block ahead.
std::size_t streaming_threshold();

// The bytes of a kernel's operands in memory up to which none is fetched a
// block ahead (kernel_memory.cpp).
inline constexpr std::size_t fetched_bytes = std::size_t(256) << 10;

}  // namespace rune::vm
