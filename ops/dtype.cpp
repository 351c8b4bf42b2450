// Names and sizes of dtypes, shapes as text.
#include <array>
#include <string>

#include "ops/errors.hpp"
#include "rune/dtype.hpp"

namespace nx {

namespace {
constexpr std::array<std::string_view, dtype_count> names = {
    "bool",    "int8",     "int16",   "int32",   "int64",     "uint8",     "uint32",
    "uint64",  "float16",  "bfloat16", "float32", "float64",  "complex64", "complex128"};
}

std::string_view name(DType dtype) { return names[std::size_t(dtype)]; }

DType dtype_from_name(std::string_view text) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == text) return DType(i);
  ops::fail("nx::dtype_from_name", "no dtype is named '" + std::string(text) + "'");
}

// A shape longer than any value may have (max_rank axes) shows its first and last
// three lengths around "...": it appears in the error refusing it.
std::string to_string(const Shape& shape) {
  constexpr std::size_t longest = max_rank, edge = 3;
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    if (shape.size() > longest && i == edge) {
      s += "..., ";
      i = shape.size() - edge;
    }
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace nx
