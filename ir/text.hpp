// The program text: print and parse (the format of the API's "Program text").
//
//   program (%0)
//     %1 : float64 [] at CPU = Map [float64:0x0000000000000000] at CPU
//     %2 : float64 [4] at CPU = Map [mul(x0, x1)] (x0: float64 [4] at CPU) (x1: float64 [] at CPU)
//       with x0 = %0, x1 = %1
//     %3 : float64 [] at CPU = reduce_sum(%2) axes=[0]
//     return %3
//
// Values are numbered in order of definition through the whole text,
// sub-programs included. Elementwise primitives print as Map expressions
// over their operands x0, x1, ...; a scalar constant as a Map of one literal
// (dtype:hex bits); a larger constant as `constant [hex, ...]`; other
// primitives as `name(%a, %b)` followed by their parameters that differ
// from the defaults (`axes=[0]`, `dtype=float32`, `value=0x...`); a scan as
// `scan N rows, init (...), xs (...), captures (...)` with its step program
// indented beneath. A parameter's type shows where it is used (as a Map
// operand, or through a scan); a parameter whose type no use shows is
// written with it in the header: `program (%0 : float64 [4] at CPU)`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "ir/program.hpp"

namespace rune::ir {

// source_lines: each equation's site (where it was traced) as a comment
// ending its first line, `  ; cloth.hpp:88`; the parser reads it back.
std::string print(const Program& program, bool source_lines = false);

// A saved text starts with a header: the format's version, then the path of
// each parameter and result in the structures the program was traced from
// ("0.position", "1.w") with its type:
//
//   rune program 1
//   parameter "0.position" : float64 [3] at CPU
//   result "" : float64 [3] at CPU
//   program (%0)
//     ...
//
// Text without a header (older, or an unnamed program's to_string) reads too.
inline constexpr int text_format = 1;
struct Names {
  std::vector<std::string> params, results;
  bool operator==(const Names&) const = default;
};
// The header (the version line, and the names where given), then the program.
std::string print_with_header(const Program& program, const Names* names, bool source_lines = false);

// What a text holds: the program, and the names where its header gives them.
struct Text {
  Program program;
  std::optional<Names> names;
};
Text parse_text(std::string_view text);

// The number n of each value's name %n in the text: numbers.at(&p)[v] for
// value v of program p (the program or one of its sub-programs); -1 for a
// value the text does not show.
using ValueNumbers = std::map<const Program*, std::vector<int>>;
ValueNumbers number_values(const Program& program);

// The most bytes rune reads of a file (rune::load_program,
// rune_program_load, the REPL's files): 256 MiB, so that a file without end
// (/dev/zero, a pipe) is refused rather than read until memory runs out.
inline constexpr std::size_t max_file_bytes = std::size_t(256) << 20;
// Reads a whole file of at most max_file_bytes into *text; gives why it
// cannot ("No such file or directory", "Is a directory" as strerror says,
// or "it is longer than 268435456 bytes, the most rune reads of a file"),
// or nullopt.
std::optional<std::string> read_file(const char* path, std::string* text);

// Reads a printed program back; throws std::invalid_argument
// "rune::parse_program: line L, column C: ..." on malformed text. The text
// is held to the limits of a value's shape (ops/sizes.hpp) and to
// rune::max_nesting sub-programs one inside another.
Program parse(std::string_view text);

}  // namespace rune::ir
