// The arguments of `run` and `start`, separated by commas: each a tensor
// as the printer writes it (tensor_text.hpp), or a shorthand that makes a
// tensor of the type it names:
//
//   zeros float64 [8]               every element 0 (ones: 1)
//   fill 2.5 float64 [3]            every element 2.5, read as the dtype's
//   linspace 0 1 float64 [2, 3]     evenly spaced from 0 to 1, in C order
//   file pos.txt float64 [100, 3]   the elements from a text file
//
// An argument file holds the elements in C order, written as in a tensor's
// text (1.5, -2, nan, true, 1-2.5j), separated by spaces, commas or line
// breaks; `#` starts a comment to the end of its line (what numpy.savetxt
// writes reads). Its name cannot hold a space or a comma.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::repl {

struct Argument {
  // A value of the argument's type: a shorthand's is a view of one element,
  // so that a huge shape is refused by the program's check before its
  // elements are made.
  nx::Tensor stand_in;
  std::function<nx::Tensor()> make;  // the argument's value
};

// Throws std::invalid_argument for text that is not arguments, naming the
// argument (from 0) it is in; a blank text is none.
std::vector<Argument> parse_arguments(std::string_view text);

// The arguments' values (a file is read here), their errors named as
// parse_arguments names them.
std::vector<nx::Tensor> make_arguments(const std::vector<Argument>& args);

// The stand-ins, to check against the program before making the values.
std::vector<nx::Tensor> stand_ins(const std::vector<Argument>& args);

}  // namespace rune::repl
