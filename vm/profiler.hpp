// The profiler: an observer (vm/observer.hpp) timing every instruction the
// VM runs while it is in effect, summed per instruction of each code, with
// the bytes each wrote. rune::profile puts one in effect on its thread;
// RUNE_PROFILE=1 puts one in effect on every thread for the whole process
// and prints its table on stderr at exit.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "rune/debug.hpp"
#include "vm/observer.hpp"

namespace rune::vm {

class Profiler final : public Observer {
 public:
  Profiler() = default;
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;
  void before(const Code& code, const Instruction& in, const Frame& frame) override;
  void after(const Code& code, const Instruction& in, const Frame& frame) override;
  void failed(const Code& code, const Instruction& in) override;
  // What it has recorded, the most time first.
  Profile profile() const;

 private:
  using Clock = std::chrono::steady_clock;
  // An instruction running on some thread: when it started, the time of the
  // instructions it ran inside it, and its line.
  struct Running {
    const Profiler* profiler;
    const Instruction* in;
    Clock::time_point start;
    double inner_seconds;
    std::size_t line;
  };
  static thread_local std::vector<Running> running_;  // (innermost last; every profiler's)
  Running* innermost();
  std::size_t line_of(const Code& code, const Instruction& in);
  // `in` ran: its times and `bytes` added to its line (nothing when it
  // began before this profiler was in effect).
  void finish(const Instruction& in, std::int64_t bytes);

  mutable std::mutex mutex_;
  std::map<std::pair<const Code*, std::size_t>, std::size_t> lines_by_instruction_;
  std::vector<ProfileLine> lines_;
};

// RUNE_PROFILE=1's profiler (null when it is not asked for), created and
// put in effect on every thread when first asked (machine.cpp asks at
// start-up).
Profiler* process_profiler();

}  // namespace rune::vm
