#include "vm/profiler.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "vm/listing.hpp"
#include "vm/operands.hpp"

namespace rune::vm {

thread_local std::vector<Profiler::Running> Profiler::running_;

namespace {

// The instruction as the profile names it: the listing's text, a fused
// kernel with its shape and steps.
std::string described(const Code& code, const Instruction& in) {
  std::string text = instruction_text(code, in);
  text.erase(text.find_last_not_of(' ') + 1);
  if (in.op == Op::fused) {
    const FusedKernel& m = code.kernels[std::size_t(in.aux)];
    text += " (" + nx::to_string(m.shape) + ", " + std::to_string(m.steps.size()) + " steps)";
  }
  return text;
}

std::int64_t bytes_written(const Code& code, const Instruction& in, const Frame& frame) {
  std::int64_t bytes = 0;
  for (Location at : writes(code, in)) {
    if (at.scalar) {
      bytes += std::int64_t(nx::size_of(code.scalar_types[std::size_t(at.index)]));
    } else {
      const nx::Tensor& t = frame.tensors[std::size_t(at.index)];
      if (t.defined()) bytes += t.numel() * std::int64_t(nx::size_of(t.dtype()));
    }
  }
  return bytes;
}

std::string seconds_text(double s) {
  char out[32];
  if (s >= 1) std::snprintf(out, sizeof out, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(out, sizeof out, "%.3f ms", s * 1e3);
  else std::snprintf(out, sizeof out, "%.3f us", s * 1e6);
  return out;
}

std::string bytes_text(std::int64_t b) {
  char out[32];
  if (b >= 1 << 20) std::snprintf(out, sizeof out, "%.1f MiB", double(b) / (1 << 20));
  else if (b >= 1 << 10) std::snprintf(out, sizeof out, "%.1f KiB", double(b) / (1 << 10));
  else std::snprintf(out, sizeof out, "%" PRId64 " B", b);
  return out;
}

}  // namespace

Profiler::~Profiler() {  // (this thread's instructions it was timing, if one threw past it)
  std::erase_if(running_, [this](const Running& r) { return r.profiler == this; });
}

Profiler::Running* Profiler::innermost() {
  for (auto r = running_.rbegin(); r != running_.rend(); ++r)
    if (r->profiler == this) return &*r;
  return nullptr;
}

std::size_t Profiler::line_of(const Code& code, const Instruction& in) {
  const std::size_t pc = std::size_t(&in - code.instructions.data());
  const Running* outer = innermost();
  std::lock_guard lock(mutex_);
  const auto [at, added] = lines_by_instruction_.try_emplace({&code, pc}, lines_.size());
  if (added)
    lines_.push_back({.instruction = described(code, in),
                      .within = outer ? int(outer->line) : -1,
                      .source = nx::ops::describe(code.site_of(pc))});
  return at->second;
}

void Profiler::before(const Code& code, const Instruction& in, const Frame&) {
  const std::size_t line = line_of(code, in);
  running_.push_back({this, &in, Clock::now(), 0., line});
}

void Profiler::finish(const Instruction& in, std::int64_t bytes) {
  const Clock::time_point end = Clock::now();
  Running* r = innermost();
  if (!r || r->in != &in) return;  // (it began before this profiler was in effect, or was finished)
  const Running done = *r;
  running_.erase(running_.begin() + (r - running_.data()));
  const double total = std::chrono::duration<double>(end - done.start).count();
  if (Running* outer = innermost()) outer->inner_seconds += total;
  std::lock_guard lock(mutex_);
  ProfileLine& line = lines_[done.line];
  ++line.calls;
  line.total_seconds += total;
  line.seconds += total - done.inner_seconds;
  line.bytes += bytes;
}

void Profiler::after(const Code& code, const Instruction& in, const Frame& frame) {
  finish(in, bytes_written(code, in, frame));
}

// (also after after(), when an observer after it threw: then nothing)
void Profiler::failed(const Code&, const Instruction& in) { finish(in, 0); }

Profile Profiler::profile() const {
  std::vector<ProfileLine> lines;
  {
    std::lock_guard lock(mutex_);
    lines = lines_;
  }
  // The most time first; `within` renumbered to the sorted lines.
  std::vector<std::size_t> order(lines.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return lines[a].seconds > lines[b].seconds; });
  std::vector<int> position(lines.size());
  for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = int(k);
  Profile out;
  for (std::size_t k : order) {
    ProfileLine line = lines[k];
    if (line.within >= 0) line.within = position[std::size_t(line.within)];
    out.lines.push_back(std::move(line));
  }
  return out;
}

Profiler* process_profiler() {
  static Profiler* const profiler = []() -> Profiler* {
    const char* v = std::getenv("RUNE_PROFILE");
    if (!v || std::atoi(v) == 0) return nullptr;
    static Profiler whole_run;
    observe_every_thread(whole_run, false);
    std::atexit([] { std::cerr << "rune profile (RUNE_PROFILE=1), every thread:\n" << whole_run.profile(); });
    return &whole_run;
  }();
  return profiler;
}

}  // namespace rune::vm

namespace rune {

double Profile::seconds() const {
  double total = 0;
  for (const ProfileLine& line : lines) total += line.seconds;
  return total;
}

std::string Profile::table() const {
  const double all = seconds();
  std::string out = "  #        time  share       calls   total time    written  instruction\n";
  char row[96];
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const ProfileLine& l = lines[k];
    std::snprintf(row, sizeof row, "%3zu %11s %5.1f%% %11" PRId64 " %12s %10s  ", k,
                  vm::seconds_text(l.seconds).c_str(), all > 0 ? 100 * l.seconds / all : 0., l.calls,
                  vm::seconds_text(l.total_seconds).c_str(), vm::bytes_text(l.bytes).c_str());
    out += row + l.instruction + (l.within >= 0 ? "  (in #" + std::to_string(l.within) + ")" : "") +
           (l.source.empty() ? "" : "  ; " + l.source) + "\n";
  }
  return out + "total " + vm::seconds_text(all) + " in " + std::to_string(lines.size()) +
         (lines.size() == 1 ? " instruction\n" : " instructions\n");
}

std::ostream& operator<<(std::ostream& out, const Profile& profile) { return out << profile.table(); }

namespace detail {

struct Profiling::State {
  vm::Profiler profiler;
  vm::Observing observing{profiler, false};
};

Profiling::Profiling() : state_(std::make_unique<State>()) {}
Profiling::~Profiling() = default;
Profile Profiling::profile() const { return state_->profiler.profile(); }

}  // namespace detail
}  // namespace rune
