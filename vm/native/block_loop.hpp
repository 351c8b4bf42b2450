// The block loop of an elementwise kernel (one not in rows), each
// machine's (x86/block_loop.cpp, a64/block_loop.cpp): why the tier leaves
// it on the VM (null when it emits it), the loop emitted (a BlockLoop,
// native.hpp), its assembly. The kernels in rows are the machines'
// fused_loop.cpp's, which ask these for the others.
#pragma once

#include <string>

#include "vm/code.hpp"

namespace rune::vm::native {

const char* block_refusal(const FusedKernel& kernel);
const void* emit_block(const FusedKernel& kernel, const char*& why);
std::string block_listing(const FusedKernel& kernel);

}  // namespace rune::vm::native
