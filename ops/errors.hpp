// The two error channels (as Dr.Jit's raise/fail and Halide's user_assert/
// internal_assert):
// - user errors: std::invalid_argument whose text starts with the entry
//   point the user called (`fail`);
// - internal errors: a rule or pass of the library broke its own contract,
//   a bug however the library was called. std::logic_error (so a catch of
//   the user's std::invalid_argument does not swallow it), whose text names
//   where it happened: "rune: internal error: the jvp rule of nx::mul: ...".
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "rune/detail/call_site.hpp"

namespace nx::ops {

// The public function the user called, while it runs, where it is a
// composite of other nx:: functions (nx::clamp of maximum and minimum): the
// user errors its parts find name it, not themselves (API.md: a message
// starts with the called function's name). Each composite opens one on entry
// (`const EntryPoint entry("nx::clamp");`); the outermost names the errors.
class EntryPoint {
 public:
  explicit EntryPoint(std::string_view api) : outer_(called_) {
    if (outer_.empty()) called_ = api;
  }
  ~EntryPoint() { called_ = outer_; }
  EntryPoint(const EntryPoint&) = delete;
  EntryPoint& operator=(const EntryPoint&) = delete;
  // The name an error that `api` found goes under.
  static std::string_view naming(std::string_view api) { return called_.empty() ? api : called_; }

 private:
  inline static thread_local std::string_view called_;
  std::string_view outer_;
};

// A user error and where the user's call was written, which its text ends
// with: "nx::add: shapes [3] and [4] do not broadcast (at cloth.hpp:88)".
// Constructs add their own places to the same parentheses (ir/located.cpp).
class PlacedError : public std::invalid_argument {
 public:
  PlacedError(const std::string& message, const std::string& place);
  const std::string& message() const { return message_; }
  const std::string& place() const { return place_; }  // "cloth.hpp:88"; empty: none

 private:
  std::string message_, place_;
};

// The place of the nx call running on this thread, where it is the user's:
// none where rune's own sources or headers made the call (an nx function
// that rune::jacfwd was given, called inside rune).
rune::detail::CallSite user_site();
// Where an equation a trace records now was written: the user's nx call,
// else the construct being bound or the equation being replayed
// (nx::detail::placing).
rune::detail::CallSite equation_site();
// "cloth.hpp:88": the file's name without its folders, and the line.
std::string describe(const rune::detail::CallSite& site);

// Throws the user error `<api>: <message>` (the composite's name for `api`
// under an EntryPoint), placed at the user's call.
[[noreturn]] void fail(std::string_view api, const std::string& message);

// A user error that only running a primitive finds, not the types of its
// operands: the ranks of a job disagreeing about a collective
// (ops/world.cpp). call_rule passes it on as the user's error.
class RunError : public PlacedError {
 public:
  using PlacedError::PlacedError;
};
// fail's error, as a RunError.
[[noreturn]] void fail_running(std::string_view api, const std::string& message);

// The user error of reading the elements of a value that a trace's
// function holds as a stand-in ("nx::item: the value is traced by
// rune::scan"): it names its construct already, so the constructs do not
// add where they were called (ir/located.cpp).
struct TracedRead : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

[[noreturn]] inline void internal_error(std::string_view where, const std::string& message) {
  throw std::logic_error("rune: internal error: " + std::string(where) + ": " + message);
}

// Checks an invariant of rune's own code: false is rune's bug, thrown as an
// internal error naming the check's file and line ("rune: internal error:
// staging.cpp:52: expected a map's value to hold its lanes along axis 0").
inline void internal_assert(bool holds, std::string_view expected,
                            rune::detail::CallSite at = rune::detail::CallSite::current()) {
  if (!holds) [[unlikely]]
    internal_error(describe(at), "expected " + std::string(expected));
}

// Calls the `kind` rule ("jvp") of the primitive whose api is `api`; a user
// error escaping it (its operands were checked before) is the rule's bug,
// reported as an internal error: "... internal error: the jvp rule of nx::mul: ...".
template <class Rule> decltype(auto) call_rule(std::string_view kind, std::string_view api, Rule&& call) {
  try {
    return call();
  } catch (const RunError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    internal_error("the " + std::string(kind) + " rule of " + std::string(api), e.what());
  }
}

}  // namespace nx::ops
