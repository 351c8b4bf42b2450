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
  LocatedError(std::string message, std::vector<std::string> places, std::string under)
      : std::invalid_argument(text(message, places, under)),
        message_(std::move(message)),
        places_(std::move(places)),
        under_(std::move(under)) {}

  LocatedError with(std::string place) const {
    std::vector<std::string> places = places_;
    places.push_back(std::move(place));
    return LocatedError(message_, std::move(places), under_);
  }

 private:
  static std::string text(const std::string& message, const std::vector<std::string>& places, const std::string& under) {
    std::string s = message + " (";
    for (std::size_t i = 0; i < places.size(); ++i) s += (i ? ", in " : "in ") + places[i];
    return s + under + ")";
  }

  std::string message_;
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
  const std::string_view file = where.file;
  const std::size_t slash = file.find_last_of('/');
  return std::string(function) + " called at " + std::string(slash == file.npos ? file : file.substr(slash + 1)) + ":" +
         std::to_string(where.line);
}

}  // namespace

void rethrow_located(const std::invalid_argument& e, std::string_view function, const CallSite& where) {
  if (dynamic_cast<const nx::ops::TracedRead*>(&e)) throw;
  if (const auto* located = dynamic_cast<const LocatedError*>(&e)) throw located->with(place(function, where));
  throw LocatedError(e.what(), {place(function, where)}, transformations());
}

}  // namespace rune::detail
