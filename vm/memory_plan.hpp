// The memory plan: which buffers a code's fused kernels and calls may write
// in place (liveness over the bytecode), and at run time whether they do.
#pragma once

#include <cstddef>

#include "vm/code.hpp"

namespace rune::vm {

struct Frame;

// Which of a code's parameters may give their buffers to its results.
struct Parameters {
  // The first `free` parameters are not kept to the end: a call's own code
  // frees all of them, a scan's step its carries, other sub-codes none
  // (their parameters are values of the frame that runs them).
  std::size_t free = 0;
  // Whether the free parameters are a scan's carries: the previous row's
  // results from the second row on, held by nothing else, their dead
  // buffers recycled too. Otherwise (a call's own parameters) a buffer is
  // taken only from a donated argument (nx::donate); a scan's carry never
  // is (a donated argument carried into a scan is still a value of the
  // frame running it).
  bool carries = false;
};

// Plans where the results of code's calls and fused kernels go (code.hpp):
// each written slot of a fused kernel gets its donors, operands of its dtype
// and shape that no later instruction, no result and no later step of the
// kernel reads. Constants (the code's) are never donors; parameters only
// as `params` says. A result with no donor, and a call whose rule computes
// into a given buffer, may take a recycled buffer: a value of its type
// written by a call or kernel and dead by then. After the instruction where
// values die that no later result takes, a release lets them go, so the
// pools reuse their memory (when anything that makes tensors follows).
// Each kernel's own memory is planned too (kernel_memory.hpp).
void plan_memory(Code& code, Parameters params);

// The buffer a fused kernel writes slot `slot` into, in frame f: its donor's
// when the plan names one and nothing else can see the writes, else its
// recycled value's under the same condition, else a fresh one. Its donor's when the frame holds the only handle to it and the handle
// the only reference to its storage (rune's own memory, C-order from its
// start: not a view, not a value the caller kept), or when it is a donated
// argument of a call's own code that no other register of the frame views (its buffer taken,
// nx::ops::take_buffer). The plan says which values die; this says, at run
// time, that nothing else reads the buffer.
nx::Tensor buffer_for(const FusedKernel& m, const FusedKernel::Slot& slot, Frame& f);

// Whether a call writes its result over its operand's buffer (Call::donor):
// the frame holds the only handle to it, and the handle the only reference
// to its storage. Asked before the call's operands are taken.
bool writes_over_operand(const Call& call, const Frame& f);

// The buffer a call whose rule computes into one (Rules::into) writes its
// result into: the caller's buffer for that result when it overlaps no
// argument, or its recycled value's (held by nothing else), or a fresh one.
nx::Tensor output_for(const Call& call, Frame& f);

// Whether the memory of two storages overlaps.
bool overlap(const nx::detail::Storage& a, const nx::detail::Storage& b);

}  // namespace rune::vm
