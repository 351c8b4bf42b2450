// The compiler: a program, whose types fix everything (the key of a jit
// call), to bytecode (code.hpp).
#pragma once

#include <memory>

#include "vm/code.hpp"

namespace rune::vm {

// Compiles `program` and, for their scans, the sub-programs inside it;
// `traced` (Code::traced), when given, is what calls on traced values
// evaluate instead.
std::shared_ptr<const Code> compile(std::shared_ptr<const ir::Program> program,
                                    std::shared_ptr<const ir::Program> traced = nullptr);

}  // namespace rune::vm
