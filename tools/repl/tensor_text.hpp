// Tensors written as nx::to_string prints them, read back:
//
//   float64 [2, 2] [[1, 2], [3, 4]]    bool [2] [true, false]
//   float64 [] 2.5    int32 [0] []    float32 [3] [nan, inf, -0]
//   complex64 [2] [1-2.5j, 0+1j]
//
// the dtype's name, the shape, then the elements nested one bracket per
// axis (a scalar's one element bare). Elements are read as the dtype's own
// type (a float32 as a float), so every printed value reads back to the same
// bits. An elided tensor (with "...") cannot be read back.
#pragma once

#include <string_view>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::repl {

// One tensor; throws std::invalid_argument saying what is wrong and where.
nx::Tensor parse_tensor(std::string_view text);

// Tensors separated by commas (`float64 [3] [1, 2, 3], float64 [] 2`); a
// blank text is none. Errors name the argument (from 0) they are in.
std::vector<nx::Tensor> parse_tensors(std::string_view text);

}  // namespace rune::repl
