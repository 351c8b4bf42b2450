// Where every code comes from: the one route from a program to the code that
// runs it, with the passes and the machine-code tier's threshold a route
// asks for, and the codes kept for eager constructs.
//
// The routes: rune::jit's calls (a code per call key, kept by the compiled
// function), rune::run and rune::bytecode of a Program (a code per Program,
// kept by it), the REPL (a code per loaded program) and constructs bound
// eagerly (rune::scan outside jit: kept here, by the program's structure,
// so a loop called every frame is compiled once and its hot counters and
// machine code carry over from call to call).
#pragma once

#include <cstdint>
#include <memory>

#include "ir/passes/scalarize.hpp"
#include "vm/code.hpp"
#include "vm/native/native.hpp"

namespace rune::vm {

struct Build {
  // ir::simplify then ir::simplify_loops(scalar_elements) first (rune::jit),
  // or the program as given (a Program, the REPL and eager constructs: their
  // listing and the debugger name the values of the program the user holds).
  bool passes = false;
  std::int64_t scalar_elements = ir::default_scalar_elements;
  // Rows or trips before a loop is promoted to machine code (0: at once,
  // negative: never; native::promote_after).
  std::int64_t native_after = native::promoted_rows;
  bool operator==(const Build&) const = default;
};

// The code of `program` built as `how` says.
std::shared_ptr<const Code> build(std::shared_ptr<const ir::Program> program, const Build& how);

// The code of a program equal to `program` (ir::equal) built before by this
// function, or `program`'s, built as given: eager constructs. The latest
// `kept_codes` are kept (their constants with them); a program with C++ code
// in it (a callback, a check, a custom rule) is equal only to one holding the
// same objects, and each eager trace makes new ones, so it is built anew.
std::shared_ptr<const Code> shared_build(std::shared_ptr<const ir::Program> program);
inline constexpr std::size_t kept_codes = 64;

// What shared_build has done in this process (for the tests).
struct SharedBuilds {
  std::int64_t built = 0;
  std::int64_t found = 0;
};
SharedBuilds shared_builds();

}  // namespace rune::vm
