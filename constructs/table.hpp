// The entries of the construct table (ir/construct.hpp), each defined in
// its construct's file.
#pragma once

#include "ir/construct.hpp"

namespace rune::constructs {

extern const ir::ConstructRules scan_rules;         // scan.cpp
extern const ir::ConstructRules iterate_rules;      // iterate.cpp
extern const ir::ConstructRules root_rules;         // root.cpp
extern const ir::ConstructRules remat_rules;        // remat.cpp
extern const ir::ConstructRules total_add_rules;    // total.cpp
extern const ir::ConstructRules collect_rules;      // total.cpp
extern const ir::ConstructRules cond_rules;         // cond.cpp
extern const ir::ConstructRules check_rules;        // check.cpp
extern const ir::ConstructRules callback_rules;     // callback.cpp
extern const ir::ConstructRules custom_rules;       // custom.cpp
extern const ir::ConstructRules linear_call_rules;  // linear_call.cpp

}  // namespace rune::constructs
