// The memory plan: which buffers a code's map kernels and calls may write
// in place (liveness over the bytecode), and at run time whether they do.
#pragma once

#include "vm/code.hpp"

namespace rune::vm {

struct Frame;

// Plans where the results of code's calls and map kernels go (code.hpp):
// each written slot of a map kernel gets its donors, operands of its dtype
// and shape that no later instruction, no result and no later step of the
// kernel reads. Constants (the code's) are never donors; parameters only of
// a call's own code (`parameters`: not a sub-code's, whose parameters are
// values of the frame that runs it), and then only when donated
// (nx::donate). A result with no donor, and a call whose rule computes
// into a given buffer, may take a recycled buffer: a value of its type
// written by a call or kernel and dead by then. After the instruction where
// values die that no later result takes, a release lets them go, so the
// pools reuse their memory (when anything that makes tensors follows).
// Each kernel's own memory is planned too (kernel_memory.hpp).
void plan_memory(Code& code, bool parameters);

// The buffer a map kernel writes slot `slot` into, in frame f: its donor's
// when the plan names one and nothing else can see the writes, else its
// recycled value's under the same condition, else a fresh one. Its donor's when the frame holds the only handle to it and the handle
// the only reference to its storage (rune's own memory, C-order from its
// start: not a view, not a value the caller kept), or when it is a donated
// argument that no other register of the frame views (its buffer taken,
// nx::ops::take_buffer). The plan says which values die; this says, at run
// time, that nothing else reads the buffer.
nx::Tensor buffer_for(const MapKernel& m, const MapKernel::Slot& slot, Frame& f);

// The buffer a call whose rule computes into one (Rules::into) writes its
// result into: the caller's buffer for that result when it overlaps no
// argument, or its recycled value's (held by nothing else), or a fresh one.
nx::Tensor output_for(const Call& call, Frame& f);

// Whether the memory of two storages overlaps.
bool overlap(const nx::detail::Storage& a, const nx::detail::Storage& b);

}  // namespace rune::vm
