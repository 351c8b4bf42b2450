// The memory plan: which buffers a code's map kernels may write in place.
#pragma once

#include "vm/code.hpp"

namespace rune::vm {

// Marks each written slot of code's map kernels with its donor (code.hpp):
// an operand of its dtype and shape that no later instruction, no result
// and no later step of the kernel reads. Parameters (the caller's) and
// constants (the code's) are never donors.
void plan_memory(Code& code);

// Whether t's buffer may be written in place: the frame holds the only
// handle to it, the handle the only reference to its storage, which is
// rune's own (not borrowed, not donated), and it is C-order from its start.
// The plan says which values die; this says, at run time, that nothing
// else (a view, a copy the caller kept) can see the writes.
bool reusable(const nx::Tensor& t);

}  // namespace rune::vm
