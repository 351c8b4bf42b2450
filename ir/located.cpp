// Errors located at their construct (include/rune/detail/located.hpp).
#include <string>
#include <vector>

#include "ops/errors.hpp"
#include "ops/trace.hpp"
#include "rune/detail/located.hpp"

namespace rune::detail {

namespace {

// An error with the places of the constructs it came through, innermost
// first, and the transformations around them.
class LocatedError : public std::invalid_argument {
 public:
  LocatedError(std::string message, std::string at, std::vector<std::string> places, std::string under)
      : std::invalid_argument(text(message, at, places, under)),
        message_(std::move(message)),
        at_(std::move(at)),
        places_(std::move(places)),
        under_(std::move(under)) {}

  LocatedError with(std::string place) const {
    std::vector<std::string> places = places_;
    places.push_back(std::move(place));
    return LocatedError(message_, at_, std::move(places), under_);
  }

 private:
  // "message (at cloth.hpp:88, in the step of rune::scan called at sim.cpp:43, under rune::jit)"
  static std::string text(const std::string& message, const std::string& at, const std::vector<std::string>& places,
                          const std::string& under) {
    std::string s = message + " (";
    if (!at.empty()) s += "at " + at + ", ";
    for (std::size_t i = 0; i < places.size(); ++i) s += (i ? ", in " : "in ") + places[i];
    return s + under + ")";
  }

  std::string message_;
  std::string at_;  // where the failing call was written (nx::ops::PlacedError)
  std::vector<std::string> places_;
  std::string under_;
};

// The entry points that transform a function (constructs are placed by
// their own frames).
bool transforms(std::string_view entry) {
  for (std::string_view t : {"rune::grad", "rune::value_and_grad", "rune::value_and_grad_aux", "rune::vjp", "rune::jvp",
                             "rune::jacfwd", "rune::jacrev", "rune::hessian", "rune::vmap", "rune::jit", "rune::program"})
    if (entry == t) return true;
  return false;
}

// ", under rune::grad, under rune::jit": the transformations active now,
// innermost first.
std::string transformations() {
  std::string s;
  std::string_view previous;
  for (int level = nx::ops::trace_depth(); level >= 1; --level) {
    const std::string_view entry = nx::ops::trace_at(level).entry_point();
    if (!transforms(entry) || entry == previous) continue;
    s += ", under " + std::string(entry);
    previous = entry;
  }
  return s;
}

std::string place(std::string_view function, const CallSite& where) {
  return std::string(function) + " called at " + nx::ops::describe(where);
}

}  // namespace

void rethrow_located(const std::invalid_argument& e, std::string_view function, const CallSite& where) {
  if (dynamic_cast<const nx::ops::TracedRead*>(&e)) throw;
  if (const auto* located = dynamic_cast<const LocatedError*>(&e)) throw located->with(place(function, where));
  if (const auto* placed = dynamic_cast<const nx::ops::PlacedError*>(&e))
    throw LocatedError(placed->message(), placed->place(), {place(function, where)}, transformations());
  throw LocatedError(e.what(), "", {place(function, where)}, transformations());
}

}  // namespace rune::detail
