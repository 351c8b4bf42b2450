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

#include <string>
#include <string_view>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::repl {

// One tensor; throws std::invalid_argument saying what is wrong and where.
nx::Tensor parse_tensor(std::string_view text);

// A tensor of the elements' texts ("1", "nan", "true", "1-2.5j"), in C
// order; throws std::invalid_argument for one that is not of the dtype.
nx::Tensor tensor_of(nx::DType dtype, const nx::Shape& shape, const std::vector<std::string_view>& elements);

// Reads tensor text left to right, part by part (arguments.cpp reads the
// shorthands with it). Each read throws std::invalid_argument saying what
// it expected and what it found.
class TensorReader {
 public:
  explicit TensorReader(std::string_view text) : text_(text) {}

  nx::Tensor tensor();     // float64 [2] [1, 2]
  nx::DType read_dtype();  // float64
  nx::Shape read_shape();  // [2, 3]
  // The next word: the characters up to a space, comma or bracket (none
  // at one).
  std::string_view word();
  // Takes the next word if it is `w`.
  bool accept_word(std::string_view w);
  bool at_end();
  // Takes `c` if it comes next (after spaces).
  bool accept(char c);
  [[noreturn]] void expected(const std::string& what);

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  nx::Shape shape_;  // the shape of the tensor being read

  void skip_spaces();
  std::string_view token();
  std::string found();
  void read_axis(std::size_t axis, std::vector<std::string_view>& words);
  [[noreturn]] void entries_differ(std::size_t axis, const std::string& text_count);
  std::string_view element();
};

}  // namespace rune::repl
