// Traces: transformations in progress, on a per-thread stack.
//
// bind() hands a primitive to the innermost trace that owns one of its
// operands, or to the innermost staging trace when that is deeper (a staging
// trace owns every value made while it is active: concrete operands become
// constants of its program); a collective goes to the map it names when
// that is deeper still. With no trace involved the eager rule runs.
// Trace kinds (staging in ir/, differentiation in ad/, maps in batch/) derive
// from Trace.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ops/primitive.hpp"

namespace nx::ops {

class Trace {
 public:
  explicit Trace(std::string_view entry_point, bool stages);
  virtual ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Computes the primitive on operands of which at least one is this
  // trace's (or, for a staging trace, none belongs to a deeper trace).
  virtual Tensor process(Prim p, std::span<const Tensor> operands, const Params& params,
                         const TensorType& type) = 0;

  // Whether this trace is the map named `axis` (rune::Axis's id): the one
  // that computes the collectives naming it (rune::lanes), whoever owns
  // their operand.
  virtual bool runs_map(std::uint64_t axis) const {
    (void)axis;
    return false;
  }

  // Told by a map (rune::vmap) whose batching rule made `value`, a value of
  // this trace, that it holds `lanes` lanes along axis 0: a staging trace
  // notes it on the equation that made it, for the NaN hunt to name the
  // lane (ir::Equation::lanes); the others have no use for it.
  virtual void holds_lanes(const Tensor& value, std::int64_t lanes) {
    (void)value;
    (void)lanes;
  }

  // The user's entry point that started the trace ("rune::scan").
  std::string_view entry_point() const { return entry_point_; }
  bool stages() const { return stages_; }
  int level() const { return level_; }
  std::uint64_t id() const { return id_; }
  // Whether t is a value of this trace.
  bool owns(const Tensor& t) const;
  // Marks a tracer as this trace's value.
  void adopt(detail::Tracer& tracer) const {
    tracer.level = level_;
    tracer.trace_id = id_;
  }

 private:
  friend class TraceScope;
  std::string_view entry_point_;
  bool stages_;
  int level_ = 0;
  std::uint64_t id_;
};

// Makes a trace the innermost one of this thread for its lifetime.
class TraceScope {
 public:
  explicit TraceScope(Trace& trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Trace& trace_;
};

// The number of active traces on this thread.
int trace_depth();
// The trace at a level (1 = outermost).
Trace& trace_at(int level);
// The trace that must process a primitive over these operands, or null to
// run it eagerly. Throws, naming `api`, for a value whose trace has ended.
Trace* find_trace(std::span<const Tensor> operands, std::string_view api);
// The same for primitive p: a collective goes to the map it names when that
// map is deeper than the trace above would be.
Trace* find_trace(Prim p, std::span<const Tensor> operands, const Params& params);

}  // namespace nx::ops
