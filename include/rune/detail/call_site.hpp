// Where a call was written: the file and line of an nx function's or a
// construct's call in the caller's source, captured with defaulted
// arguments (as std::source_location::current() is, from the builtins GCC
// and clang 14 both have: clang 14 with libstdc++ has no
// std::source_location).
#pragma once

namespace rune::detail {

// As a defaulted parameter, `= CallSite::current()` gives the caller's place.
struct CallSite {
  const char* file = nullptr;  // null: no place
  unsigned line = 0;
  static constexpr CallSite current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) noexcept {
    return {file, line};
  }
  explicit operator bool() const noexcept { return file != nullptr; }
};

}  // namespace rune::detail

namespace nx::detail {

// The place of the outermost nx call running on this thread (null outside
// one): the operand of the call (nx::Operand), which outlives it. Each nx
// function sets it from its operand while it runs; the calls a composite
// makes inside rune go under their caller's place. Traces record it with
// each equation and user errors name it (ops/errors.hpp). (A pointer: one
// word to save and restore, on every eager call.)
inline thread_local const rune::detail::CallSite* calling = nullptr;

// Makes `site` the thread's place while it lives, unless an outer call set
// one first. `site` outlives it.
class Calling {
 public:
  explicit Calling(const rune::detail::CallSite& site) noexcept : outer_(calling) {
    if (!outer_) calling = &site;
  }
  ~Calling() { calling = outer_; }
  Calling(const Calling&) = delete;
  Calling& operator=(const Calling&) = delete;

 private:
  const rune::detail::CallSite* outer_;
};

// The place of the construct being bound or the equation being replayed on
// this thread (none outside one): a construct's equation is placed at its
// call, and an equation replayed under a transformation (a sub-program
// evaluated by a construct's rule, a transpose) keeps the place it was
// traced at. It places what a trace records where no user's nx call does
// (ops::equation_site), and no error.
inline thread_local rune::detail::CallSite placing;

// Makes `site`, when it is one, the thread's `placing` while it lives (the
// innermost wins).
class Placing {
 public:
  explicit Placing(rune::detail::CallSite site) noexcept : outer_(placing) {
    if (site) placing = site;
  }
  ~Placing() { placing = outer_; }
  Placing(const Placing&) = delete;
  Placing& operator=(const Placing&) = delete;

 private:
  rune::detail::CallSite outer_;
};

}  // namespace nx::detail
