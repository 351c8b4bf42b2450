// The block loop of an elementwise kernel (one not in rows) on x86-64
// (block_loop.cpp): why the tier leaves it on the VM (null when it emits
// it), the loop emitted (a BlockLoop, native.hpp), its assembly. The
// kernels in rows are fused_loop.cpp's, which asks these for the others.
#pragma once

#include <string>

#include "vm/code.hpp"

namespace rune::vm::native {

const char* block_refusal(const FusedKernel& kernel);
const void* emit_block(const FusedKernel& kernel, const char*& why);
std::string block_listing(const FusedKernel& kernel);

}  // namespace rune::vm::native
