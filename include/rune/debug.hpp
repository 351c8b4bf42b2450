// Looking inside compiled code (docs/debugging.md): rune::profile, where a
// compiled function's time goes, instruction by instruction; and
// rune::debug_nans, which stops at the first NaN or infinity made from
// finite operands.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace rune {

// One bytecode instruction (a fused kernel, a call, a scan, a scalar
// instruction), summed over every time it ran: a scan's step's instructions
// over its rows.
struct ProfileLine {
  std::string instruction;   // as rune::bytecode lists it (a fused kernel with its shape and steps)
  int within = -1;           // the line of the instruction it ran inside (a scan, a cond), or -1
  std::string source;        // where its equation was traced, "cloth.hpp:88" (empty: unknown)
  std::int64_t calls = 0;
  double seconds = 0;        // its own time: not what ran inside it
  double total_seconds = 0;  // with what ran inside it
  std::int64_t bytes = 0;    // the bytes of the values it wrote
};

struct Profile {
  std::vector<ProfileLine> lines;  // the most time (seconds) first
  double seconds() const;          // the lines' own times summed
  // A table: one line per instruction, the most time first, with its share
  // (and its source line after `;`).
  std::string table() const;
};
std::ostream& operator<<(std::ostream& out, const Profile& profile);

namespace detail {
// Records the instructions the VM runs on this thread while it lives.
class Profiling {
 public:
  Profiling();
  ~Profiling();
  Profiling(const Profiling&) = delete;
  Profiling& operator=(const Profiling&) = delete;
  Profile profile() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};
}  // namespace detail

// Calls f(args...) (a function compiled by rune::jit, or any function whose
// compiled calls and eager loops should be seen) and gives the profile of
// the VM instructions it ran on this thread. A loop the machine-code tier
// promoted is one line, its machine code's time.
template <class F, class... A> Profile profile(F&& f, const A&... args) {
  detail::Profiling profiling;
  std::invoke(f, args...);
  return profiling.profile();
}

// NaN hunting: while on, every primitive's result, eager or compiled, is
// checked, and the first NaN or infinity that a primitive makes from finite
// operands raises std::runtime_error naming the primitive, the element, and
// the scan row or iterate trip it was made in. Code compiled while it is
// on runs each primitive on its own (no fused kernels), on the VM; code
// compiled before names a fused kernel's primitives. RUNE_DEBUG_NANS=1 in
// the environment turns it on from the start. Off (the default), it costs
// nothing.
void debug_nans(bool on);
bool debugging_nans();

}  // namespace rune
