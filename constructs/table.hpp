// The entries of the construct table (ir/construct.hpp), one per row of
// ir/constructs.def, each defined in its construct's file.
#pragma once

#include "ir/construct.hpp"

namespace rune::constructs {

#define CONSTRUCT(kind) extern const ir::ConstructRules kind##_rules;
#include "ir/constructs.def"
#undef CONSTRUCT

}  // namespace rune::constructs
