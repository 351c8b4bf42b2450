// Constant folding: a primitive equation whose inputs are all constants'
// values is computed when the program is compiled, by its eager rule (so
// its bits are eager's), and becomes a constant, in the program and its
// sub-programs. It folds only where the constant stays small: no more
// elements than its largest input (a broadcast or a pad of a scalar would
// make a large constant of a cheap view) and at most
// `max_folded_elements`. Effects and constructs are never folded, nor the
// collectives (their value depends on the maps running around the call),
// nor an equation whose eager rule throws (it is left as it is).
#pragma once

#include <cstdint>

#include "ir/program.hpp"

namespace rune::ir {

inline constexpr std::int64_t max_folded_elements = 4096;

Program fold_constants(const Program& program);

}  // namespace rune::ir
