// Looking at a value's elements in the debugger: a part of it (`print
// %7[2:5, 0]`), its statistics (`stats %7`), the first NaN or infinity in
// it (`break nan`), and a summary of a large tensor (a register `stepi`
// shows).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::repl {

// A value name with an optional index: "%7", "%7[150]", "%7[2:5, 0]".
struct IndexedName {
  int number = -1;
  std::string index;  // between the brackets; "" for none
};

// The words of a `print` or `stats` line, separated by spaces or commas,
// an index's kept in its word ("%7[2:5, 0], %8" is two). Throws std::invalid_argument for an
// unclosed bracket.
std::vector<std::string> value_words(const std::string& args);
// Reads "%7" or "%7[...]"; throws std::invalid_argument otherwise.
IndexedName parse_indexed(const std::string& word);

// The part of t an index names, one item per leading axis: `k` (from the
// end when negative) takes element k and drops the axis, `a:b` keeps
// elements a to b - 1 (`a:` to the end, `:b` from the start). Throws
// std::invalid_argument naming `name` for an index t does not have.
nx::Tensor indexed(const nx::Tensor& t, const std::string& index, const std::string& name);

// "min -1, max 3, mean 0.5, 0 NaN, 0 infinite" over t's elements (a
// complex value: over their magnitudes).
std::string stats_text(const nx::Tensor& t);

// "nan at element 3" (in C order) for t's first NaN or infinity, if any.
std::optional<std::string> first_non_finite_text(const nx::Tensor& t);

// t as the printer writes it, or, above `shown` elements, its type, its
// first elements and its statistics: "float64 [1097] [0, 0.1, 0.2, 0.3,
// ...]; min 0, max 109.6, mean 54.8, 0 NaN, 0 infinite".
std::string summary_text(const nx::Tensor& t, std::int64_t shown = 8);

}  // namespace rune::repl
