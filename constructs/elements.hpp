// Reading a bool tensor on concrete values, for the constructs that act on
// its first false element (an nx::check's failure, an iterate's first
// running lane).
#pragma once

#include <optional>

#include "rune/tensor.hpp"

namespace rune::constructs {

// The multi-index (C order) of the first false element, if one is false.
std::optional<nx::Index> first_false(const nx::Tensor& condition);

}  // namespace rune::constructs
