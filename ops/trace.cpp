#include "ops/trace.hpp"

#include <atomic>
#include <vector>

#include "ops/errors.hpp"

namespace nx::ops {

namespace {
thread_local std::vector<Trace*> stack;
std::atomic<std::uint64_t> next_id{1};
}  // namespace

Trace::Trace(std::string_view entry_point, bool stages)
    : entry_point_(entry_point), stages_(stages), id_(next_id.fetch_add(1)) {}
Trace::~Trace() = default;

bool Trace::owns(const Tensor& t) const {
  const auto* tracer = t.impl()->tracer.get();
  return tracer && tracer->trace_id == id_;
}

TraceScope::TraceScope(Trace& trace) : trace_(trace) {
  stack.push_back(&trace);
  trace.level_ = int(stack.size());
}

TraceScope::~TraceScope() {
  stack.pop_back();
  trace_.level_ = 0;
}

int trace_depth() { return int(stack.size()); }
Trace& trace_at(int level) { return *stack[std::size_t(level - 1)]; }

Trace* find_trace(std::span<const Tensor> operands, std::string_view api) {
  int level = 0;
  for (const Tensor& t : operands) {
    const auto* tracer = t.impl()->tracer.get();
    if (!tracer) continue;
    if (tracer->level < 1 || tracer->level > int(stack.size()) || stack[tracer->level - 1]->id() != tracer->trace_id)
      fail(api, "a value traced by " + std::string(tracer->traced_by()) +
                    " is used after its trace ended (keep traced values inside the function that was traced)");
    level = std::max(level, tracer->level);
  }
  for (int l = int(stack.size()); l > level; --l)
    if (stack[std::size_t(l - 1)]->stages()) return stack[std::size_t(l - 1)];
  return level ? stack[std::size_t(level - 1)] : nullptr;
}

Trace* find_trace(Prim p, std::span<const Tensor> operands, const Params& params) {
  Trace* trace = find_trace(operands, info(p).api);
  if (info(p).family != Family::collective) return trace;
  for (int l = int(stack.size()); l > (trace ? trace->level() : 0); --l)
    if (stack[std::size_t(l - 1)]->runs_map(std::uint64_t(params.axis))) return stack[std::size_t(l - 1)];
  return trace;
}

}  // namespace nx::ops
