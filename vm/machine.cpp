// The dispatch loop, and moving values between the register files.
#include "vm/machine.hpp"

#include <cstring>

#include "ops/concrete.hpp"
#include "vm/nan_hunt.hpp"
#include "vm/observer.hpp"
#include "vm/profiler.hpp"

namespace rune::vm {

namespace {

thread_local CheckScope* innermost_checks = nullptr;

// RUNE_PROFILE=1: the profiler in effect from the start; RUNE_DEBUG_NANS=1:
// the NaN hunt.
[[maybe_unused]] const Profiler* const whole_run_profiler = process_profiler();
[[maybe_unused]] const bool hunting_from_the_start = hunt_nans_from_environment();

// Element `element` (in C order) of t, into a scalar register.
void load(const nx::Tensor& t, std::int64_t element, Scalar& into) {
  const nx::detail::TensorImpl& impl = *t.impl();
  std::int64_t at = 0;
  for (std::size_t d = impl.shape.size(); d-- > 0 && element > 0;) {
    at += element % impl.shape[d] * impl.strides[d];
    element /= impl.shape[d];
  }
  const std::size_t size = nx::size_of(impl.dtype);
  std::memcpy(into.bytes, nx::ops::base_address(impl) + at * std::int64_t(size), size);
}

// Threaded dispatch (labels as values, of GCC and Clang): each
// instruction's code ends by jumping to the next one's. Observed, each
// instruction is shown to the thread's observers before and after it runs.
template <bool Observed> void dispatch(const Code& code, Frame& f, std::size_t first, std::size_t last) {
  static const void* const labels[] = {
#define OP(name, operands, table, tier, meaning) &&op_##name,
#include "vm/opcodes.def"
#undef OP
  };
  Scalar* s = f.scalars.data();
  const Instruction* in = code.instructions.data() + first;
  const Instruction* const end = code.instructions.data() + last;
#define NEXT                                                  \
  if constexpr (Observed) notify_after(code, *in, f);         \
  if (++in == end) return;                                    \
  if constexpr (Observed) notify_before(code, *in, f);        \
  goto* labels[int(in->op)]
  if (in == end) return;
  if constexpr (Observed) notify_before(code, *in, f);
  goto* labels[int(in->op)];
op_add_f64: s[in->dst].f64 = s[in->a].f64 + s[in->b].f64; NEXT;
op_sub_f64: s[in->dst].f64 = s[in->a].f64 - s[in->b].f64; NEXT;
op_mul_f64: s[in->dst].f64 = s[in->a].f64 * s[in->b].f64; NEXT;
op_div_f64: s[in->dst].f64 = s[in->a].f64 / s[in->b].f64; NEXT;
op_neg_f64: s[in->dst].f64 = -s[in->a].f64; NEXT;
op_add_f32: s[in->dst].f32 = s[in->a].f32 + s[in->b].f32; NEXT;
op_sub_f32: s[in->dst].f32 = s[in->a].f32 - s[in->b].f32; NEXT;
op_mul_f32: s[in->dst].f32 = s[in->a].f32 * s[in->b].f32; NEXT;
op_div_f32: s[in->dst].f32 = s[in->a].f32 / s[in->b].f32; NEXT;
op_neg_f32: s[in->dst].f32 = -s[in->a].f32; NEXT;
op_unary:
op_convert: in->row.unary(1, s[in->a].bytes, 0, s[in->dst].bytes); NEXT;
op_binary: in->row.binary(1, s[in->a].bytes, 0, s[in->b].bytes, 0, s[in->dst].bytes); NEXT;
op_select: in->row.select(1, s[in->a].bytes, 0, s[in->b].bytes, 0, s[in->c].bytes, 0, s[in->dst].bytes); NEXT;
op_load: load(f.tensors[std::size_t(in->a)], in->b, s[in->dst]); NEXT;
op_box: f.tensors[std::size_t(in->dst)] = read(code, f, {true, in->a}); NEXT;
op_call: run_primitive(code.calls[std::size_t(in->aux)], f); NEXT;
op_construct: run_construct(code.calls[std::size_t(in->aux)], f); NEXT;
op_check: run_check(code.calls[std::size_t(in->aux)], f); NEXT;
op_fused: run_fused(code.kernels[std::size_t(in->aux)], f); NEXT;
op_scan: run_scan(code.scans[std::size_t(in->aux)], f); NEXT;
op_body: run_body(code.invokes[std::size_t(in->aux)], f); NEXT;
op_cond: run_cond(code.invokes[std::size_t(in->aux)], f); NEXT;
op_iterate: run_iterate(code.invokes[std::size_t(in->aux)], f); NEXT;
op_release:
  for (std::int32_t r : code.releases[std::size_t(in->aux)]) f.tensors[std::size_t(r)] = nx::Tensor();
  NEXT;
#undef NEXT
}

// The observed loop, telling the observers of an instruction that threw.
void observed_dispatch(const Code& code, Frame& f, std::size_t first, std::size_t last) {
  const Instruction* current = nullptr;
  try {
    for (std::size_t i = first; i < last; ++i) {  // (one at a time: `current` is the one that throws)
      current = &code.instructions[i];
      dispatch<true>(code, f, i, i + 1);
    }
  } catch (...) {
    notify_failed(code, *current);
    throw;
  }
}

}  // namespace

nx::Tensor read(const Code& code, const Frame& f, Location at) {
  if (!at.scalar) return f.tensors[std::size_t(at.index)];
  const nx::DType dtype = code.scalar_types[std::size_t(at.index)];
  nx::Tensor t = nx::ops::make_tensor(dtype, {});
  std::memcpy(nx::ops::base_address(*t.impl()), f.scalars[std::size_t(at.index)].bytes, nx::size_of(dtype));
  return t;
}

void write(Frame& f, Location at, const nx::Tensor& value) {
  if (!at.scalar) {
    f.tensors[std::size_t(at.index)] = value;
    return;
  }
  std::memcpy(f.scalars[std::size_t(at.index)].bytes, nx::ops::base_address(*value.impl()), nx::size_of(value.dtype()));
}

// The bodies of start, execute, results and execute_checked, inlined into
// run: a small call (W6 in bench/) spends a fifth of its time in calls
// between them otherwise.
[[gnu::always_inline]] inline void execute_range(const Code& code, Frame& frame, std::size_t first, std::size_t last) {
  if (observed()) observed_dispatch(code, frame, first, last);
  else dispatch<false>(code, frame, first, last);
}

[[gnu::always_inline]] inline void put_params(const Code& code, Frame& frame, std::span<const nx::Tensor> args) {
  for (std::size_t k = 0; k < args.size(); ++k) write(frame, code.params[k], args[k]);
}

[[gnu::always_inline]] inline Values take_results(const Code& code, Frame& frame) {
  Values out;
  out.reserve(code.results.size());
  for (std::size_t k = 0; k < code.results.size(); ++k) {
    const Location at = code.results[k];
    if (at.scalar || !code.moved_out[k]) out.push_back(read(code, frame, at));
    else out.push_back(std::move(frame.tensors[std::size_t(at.index)]));
  }
  return out;
}

void execute(const Code& code, Frame& frame) { execute_range(code, frame, 0, code.instructions.size()); }

void execute(const Code& code, Frame& frame, std::size_t first, std::size_t last) {
  execute_range(code, frame, first, last);
}

Frame start(const Code& code, std::span<const nx::Tensor> args) {
  Frame frame(code);
  put_params(code, frame, args);
  return frame;
}

Values results(const Code& code, const Frame& frame) {
  Values out;
  out.reserve(code.results.size());
  for (Location at : code.results) out.push_back(read(code, frame, at));
  return out;
}

Values results(const Code& code, Frame&& frame) { return take_results(code, frame); }

CheckScope::CheckScope() : outer_(innermost_checks) { innermost_checks = this; }
CheckScope::~CheckScope() { innermost_checks = outer_; }

void CheckScope::failed(std::exception_ptr e) {
  if (!innermost_checks) std::rethrow_exception(e);
  if (!innermost_checks->first_) innermost_checks->first_ = std::move(e);
}

[[gnu::always_inline]] inline void execute_all_checked(const Code& code, Frame& frame) {
  if (!code.may_check) return execute_range(code, frame, 0, code.instructions.size());
  CheckScope checks;
  try {
    execute_range(code, frame, 0, code.instructions.size());
  } catch (...) {
    checks.raise();  // (an error after a failed check: the check's, which came first)
    throw;
  }
  checks.raise();
}

void execute_checked(const Code& code, Frame& frame) { execute_all_checked(code, frame); }

Values run(const Code& code, std::span<const nx::Tensor> args) {
  Frame frame(code);
  put_params(code, frame, args);
  execute_all_checked(code, frame);
  return take_results(code, frame);
}

}  // namespace rune::vm
