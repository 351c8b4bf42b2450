// The memory plan: which buffers a code's map kernels may write in place,
// which block buffers their temporaries share, which results they stream,
// which operands they ask of the caches a block ahead.
#pragma once

#include "vm/code.hpp"

namespace rune::vm {

struct Frame;

// Marks each written slot of code's map kernels with its donor (code.hpp):
// an operand of its dtype and shape that no later instruction, no result
// and no later step of the kernel reads. Constants (the code's) are never
// donors; parameters only of a call's own code (`parameters`: not a
// sub-code's, whose parameters are values of the frame that runs it), and
// then only when donated (nx::donate). A call whose rule computes into a
// given buffer gets donors too: values of its result's type that are dead
// by then. Also gives each kernel's
// temporaries their block buffers, its large results the streaming loops,
// and its steps their shares of the next block's lines to fetch.
void plan_memory(Code& code, bool parameters);

// The buffer a map kernel writes slot `slot` into, in frame f: its donor's
// when the plan names one and nothing else can see the writes, else a fresh
// one. Its donor's when the frame holds the only handle to it and the handle
// the only reference to its storage (rune's own memory, C-order from its
// start: not a view, not a value the caller kept), or when it is a donated
// argument that no other register of the frame views (its buffer taken,
// nx::ops::take_buffer). The plan says which values die; this says, at run
// time, that nothing else reads the buffer.
nx::Tensor buffer_for(const MapKernel& m, const MapKernel::Slot& slot, Frame& f);

// The buffer a call whose rule computes into one (Rules::into) writes its
// result into: the caller's buffer for that result when it overlaps no
// argument, or a donor's (a dead value's, held by nothing else), or a
// fresh one.
nx::Tensor output_for(const Call& call, Frame& f);

// The bytes a map kernel writes beyond which its results stream past the
// caches: half the last-level cache (results that would not stay there, as
// glibc's memcpy decides), at least the eager kernels' streaming_bytes.
// Smaller results are fetched into the caches a block ahead
// (vm/map_kernel.cpp).
std::size_t streaming_threshold();

// Whether the memory of two storages overlaps.
bool overlap(const nx::detail::Storage& a, const nx::detail::Storage& b);

}  // namespace rune::vm
