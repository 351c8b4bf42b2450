// Errors located at their construct: a user error raised while a construct
// traces its function (a scan's step, an iterate's until, a cond's branch)
// comes out with where that construct was called, and under which
// transformations:
//
//   nx::add: shapes [2] and [3] do not broadcast (at game.cpp:29, in the
//   step of rune::scan called at game.cpp:31, under rune::grad)
//
// Constructs nested one in another each add their place, innermost first.
#pragma once

#include <stdexcept>
#include <string_view>

#include "rune/detail/call_site.hpp"

namespace rune::detail {

// Throws e again with "<function> called at <file>:<line>" added (function:
// "the step of rune::scan"). Its type stays std::invalid_argument (a
// subclass that keeps the places); an error reading a stand-in, which
// names its construct already, passes as it is.
[[noreturn]] void rethrow_located(const std::invalid_argument& e, std::string_view function,
                                  const CallSite& where);

// f(), whose user errors are located at `where`.
template <class F> decltype(auto) located(std::string_view function, const CallSite& where, F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    rethrow_located(e, function, where);
  }
}

}  // namespace rune::detail
