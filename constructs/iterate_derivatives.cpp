// rune::iterate's derivatives, by the trips the loop takes (never by a
// masked loop of max trips: a loop that stops after 2 trips costs 2 trips
// however large max is, and no trip computes the step at a carry the loop
// did not step, whose derivative could be infinite).
//
// Forward mode: one iterate over the carry and its tangent (until reads the
// carry alone), whose step is the step's forward derivative.
//
// Linearization: the primal loop keeps the carry and the stop of each trip
// in buffers of max rows, and counts its trips; the linear program records
// a linear call whose transpose is a loop back over those trips (from the
// last), each computing its step's linearization again from the kept carry
// (a replay: adds to totals are left out) and transposing it. So reverse
// mode keeps (max rows of) the carries, not every step's intermediate
// values, and nested loops keep each level's carries only while that
// level's backward trip runs.
#include <algorithm>

#include "ad/jvp_trace.hpp"
#include "ad/split.hpp"
#include "ad/transpose.hpp"
#include "constructs/batched_program.hpp"
#include "constructs/iterate.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;

// An iterate's inputs as primals and tangents, and which have a tangent in
// its derivative (`slots`: every float carry, since a step can give one a
// tangent, and the step's float captures that have one; until has none).
struct Inputs {
  IterateParts parts;
  std::vector<Tensor> primals, tangents;
  std::vector<bool> carry_slots, capture_slots;  // (capture_slots: of the step's captures)
  ir::TensorType stop;                            // until's result

  Inputs(const ir::Equation& eq, ad::JvpTrace& trace, std::span<const Tensor> inputs) : parts(eq, inputs.size()) {
    for (const Tensor& t : inputs) {
      primals.push_back(trace.primal_of(t));
      tangents.push_back(trace.tangent_of(t));
    }
    for (std::size_t k = 0; k < parts.carries; ++k) carry_slots.push_back(nx::is_inexact(primals[k].dtype()));
    for (std::size_t j = first_step_capture(); j < inputs.size(); ++j)
      capture_slots.push_back(tangents[j].defined() && nx::is_inexact(primals[j].dtype()));
    const ir::Program& until = *eq.programs[0];
    stop = until.types[std::size_t(until.results[0])];
  }
  std::size_t first_step_capture() const { return parts.carries + parts.until_captures; }
  std::span<const Tensor> carry() const { return std::span(primals).first(parts.carries); }
  std::span<const Tensor> until_captures() const {
    return std::span(primals).subspan(parts.carries, parts.until_captures);
  }
  std::span<const Tensor> step_captures() const { return std::span(primals).subspan(first_step_capture()); }
  // Whether a derivative flows: a float carry or a step capture has a tangent.
  bool differentiated() const {
    for (std::size_t k = 0; k < parts.carries; ++k)
      if (carry_slots[k] && tangents[k].defined()) return true;
    return std::find(capture_slots.begin(), capture_slots.end(), true) != capture_slots.end();
  }
  // The step's parameters' types, and which carry a tangent.
  std::vector<ir::TensorType> step_types() const {
    std::vector<ir::TensorType> out;
    for (const Tensor& x : carry()) out.push_back(nx::ops::type_of(x));
    out.push_back(stop);
    for (const Tensor& c : step_captures()) out.push_back(nx::ops::type_of(c));
    return out;
  }
  std::vector<bool> step_slots() const {
    std::vector<bool> out = carry_slots;
    out.push_back(false);
    out.insert(out.end(), capture_slots.begin(), capture_slots.end());
    return out;
  }
  // The tangents of the slotted step captures.
  std::vector<Tensor> capture_tangents() const {
    std::vector<Tensor> out;
    for (std::size_t j = 0; j < capture_slots.size(); ++j)
      if (capture_slots[j]) out.push_back(tangents[first_step_capture() + j]);
    return out;
  }
};

// A program traced from `body` over parameters of `types`, and the values
// of enclosing traces it reads.
struct Traced {
  std::shared_ptr<const ir::Program> program;
  std::vector<Tensor> captures;
};
template <class Body> Traced traced(std::span<const ir::TensorType> types, Body body) {
  ir::StagingTrace staging("rune::iterate");
  Traced out;
  {
    nx::ops::TraceScope scope(staging);
    std::vector<Tensor> params;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    out.program = staging.finish(body(std::span<const Tensor>(params)));
  }
  out.captures = staging.captures();
  return out;
}

// Until over a carry whose first values are the iterate's (the loops of
// the derivative carry more), then until's captures.
Traced until_over(const ir::Equation& eq, const Inputs& in, const std::vector<ir::TensorType>& carry_types) {
  std::vector<ir::TensorType> types = carry_types;
  for (const Tensor& c : in.until_captures()) types.push_back(nx::ops::type_of(c));
  const std::size_t n = in.parts.carries, carry = carry_types.size();
  return traced(types, [&](std::span<const Tensor> p) {
    std::vector<Tensor> args(p.begin(), p.begin() + long(n));
    args.insert(args.end(), p.begin() + long(carry), p.end());
    return ir::evaluate(*eq.programs[0], args);
  });
}

// An iterate of `until` and `step` (their captures appended to their
// groups) over `carry`, with until's and the step's captures.
std::vector<Tensor> bind_loop(std::int64_t max, std::span<const Tensor> carry, const Traced& until,
                              std::vector<Tensor> until_captures, const Traced& step,
                              std::vector<Tensor> step_captures) {
  until_captures.insert(until_captures.end(), until.captures.begin(), until.captures.end());
  step_captures.insert(step_captures.end(), step.captures.begin(), step.captures.end());
  ir::Equation loop;
  loop.kind = ir::OpKind::iterate;
  loop.info = ir::IterateInfo{max, int(carry.size()), int(until_captures.size())};
  loop.programs = {until.program, step.program};
  std::vector<Tensor> inputs(carry.begin(), carry.end());
  inputs.insert(inputs.end(), until_captures.begin(), until_captures.end());
  inputs.insert(inputs.end(), step_captures.begin(), step_captures.end());
  return ir::bind_construct(loop, inputs, "rune::iterate");
}

// The outputs of the derivative: each carry with its tangent where it is
// a float.
std::vector<Tensor> wrap(ad::JvpTrace& trace, const Inputs& in, std::span<const Tensor> carry,
                         std::span<const Tensor> tangents) {
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < in.parts.carries; ++k)
    out.push_back(in.carry_slots[k] ? trace.wrap(carry[k], tangents[k]) : carry[k]);
  return out;
}

// Forward mode: the carry and the tangents of its floats stepped together.
std::vector<Tensor> forward(ad::JvpTrace& trace, const ir::Equation& eq, const Inputs& in) {
  const std::size_t n = in.parts.carries;
  const ad::Forward derivative = ad::forward(*eq.programs[1], in.step_types(), in.step_slots());
  std::vector<Tensor> carry(in.carry().begin(), in.carry().end());
  for (std::size_t k = 0; k < n; ++k)
    if (in.carry_slots[k])
      carry.push_back(in.tangents[k].defined() ? in.tangents[k] : nx::zeros_like(in.primals[k]));
  const std::vector<ir::TensorType> carry_types = types_of(carry);
  const Traced until = until_over(eq, in, carry_types);
  const std::vector<Tensor> capture_tangents = in.capture_tangents();
  std::vector<ir::TensorType> step_types = carry_types;
  step_types.push_back(in.stop);
  for (const Tensor& c : in.step_captures()) step_types.push_back(nx::ops::type_of(c));
  for (const Tensor& t : capture_tangents) step_types.push_back(nx::ops::type_of(t));
  const Traced step = traced(step_types, [&](std::span<const Tensor> p) {
    // the forward derivative's parameters: carry, stop, captures, then the slots' tangents
    std::vector<Tensor> args(p.begin(), p.begin() + long(n));
    args.insert(args.end(), p.begin() + long(carry.size()), p.end() - long(capture_tangents.size()));
    args.insert(args.end(), p.begin() + long(n), p.begin() + long(carry.size()));
    args.insert(args.end(), p.end() - long(capture_tangents.size()), p.end());
    args.insert(args.end(), derivative.captures.begin(), derivative.captures.end());
    const std::vector<Tensor> results = ir::evaluate(*derivative.program, args);
    std::vector<Tensor> next(results.begin(), results.begin() + long(n));
    for (std::size_t k = 0; k < n; ++k)
      if (in.carry_slots[k]) next.push_back(results[n + k]);
    return next;
  });
  std::vector<Tensor> step_captures(in.step_captures().begin(), in.step_captures().end());
  step_captures.insert(step_captures.end(), capture_tangents.begin(), capture_tangents.end());
  const std::vector<Tensor> out =
      bind_loop(in.parts.max, carry, until, {in.until_captures().begin(), in.until_captures().end()}, step,
                step_captures);
  std::vector<Tensor> tangents(n);
  for (std::size_t k = 0, t = n; k < n; ++k)
    if (in.carry_slots[k]) tangents[k] = out[t++];
  return wrap(trace, in, std::span(out).first(n), tangents);
}

// What the backward pass reads: the number of trips, and each trip's carry
// and stop (rows of buffers; rows past the trips are zeros).
struct Trips {
  std::vector<Tensor> carry;    // the last carry
  Tensor count;                 // int64 []
  std::vector<Tensor> kept;     // for each carry, then the stop: [rows, ...]
};

Tensor start_at(const Tensor& row, std::int64_t ndim) {
  std::vector<Tensor> starts{nx::reshape(row, {1})};
  if (ndim > 1) starts.push_back(nx::zeros(nx::int64, {ndim - 1}));
  return nx::concatenate(starts);
}

// Row `row` of a buffer.
Tensor row_of(const Tensor& buffer, const Tensor& row) {
  nx::Shape sizes = buffer.shape();
  sizes[0] = 1;
  nx::Shape shape(buffer.shape().begin() + 1, buffer.shape().end());
  return nx::reshape(nx::dynamic_slice(buffer, start_at(row, buffer.ndim()), sizes), shape);
}

// The buffer with `value` as row `row`.
Tensor with_row(const Tensor& buffer, const Tensor& value, const Tensor& row) {
  nx::Shape one = value.shape();
  one.insert(one.begin(), 1);
  return nx::dynamic_update_slice(buffer, nx::reshape(value, one), start_at(row, buffer.ndim()));
}

// A buffer of zeros for `rows` rows (at least one: a slice of it is traced
// even where no trip reads it).
Tensor buffer(const ir::TensorType& type, std::int64_t rows) {
  nx::Shape shape = type.shape;
  shape.insert(shape.begin(), std::max<std::int64_t>(rows, 1));
  return nx::zeros(type.dtype, shape);
}

// On concrete primals: the loop run here, its trips kept (as many rows as
// trips).
Trips run_keeping(const ir::Equation& eq, const Inputs& in) {
  std::vector<std::vector<Tensor>> rows(in.parts.carries + 1);
  Trips out;
  const Ran ran = run(eq, in.primals, [&](std::span<const Tensor> carry, const Tensor& stop) {
    for (std::size_t k = 0; k < carry.size(); ++k) rows[k].push_back(carry[k]);
    rows.back().push_back(stop);
  });
  out.carry = ran.carry;
  out.count = nx::scalar(nx::int64, double(ran.trips));
  std::vector<ir::TensorType> types = in.step_types();
  for (std::size_t k = 0; k < rows.size(); ++k)
    out.kept.push_back(rows[k].empty() ? buffer(types[k], 0) : nx::stack(rows[k]));
  return out;
}

// Traced: an iterate that also counts its trips and writes each trip's
// carry and stop into buffers of max rows.
Trips loop_keeping(const ir::Equation& eq, const Inputs& in) {
  const std::size_t n = in.parts.carries;
  std::vector<Tensor> carry(in.carry().begin(), in.carry().end());
  carry.push_back(nx::scalar(nx::int64, 0.));
  const std::vector<ir::TensorType> kept = in.step_types();  // (the carry's, then the stop's)
  for (std::size_t k = 0; k <= n; ++k) carry.push_back(buffer(kept[k], in.parts.max));
  const std::vector<ir::TensorType> carry_types = types_of(carry);
  const Traced until = until_over(eq, in, carry_types);
  std::vector<ir::TensorType> step_types = carry_types;
  step_types.push_back(in.stop);
  for (const Tensor& c : in.step_captures()) step_types.push_back(nx::ops::type_of(c));
  const Traced step = traced(step_types, [&](std::span<const Tensor> p) {
    const Tensor& trip = p[n];
    const Tensor& stop = p[carry.size()];
    std::vector<Tensor> args(p.begin(), p.begin() + long(n));
    args.push_back(stop);
    args.insert(args.end(), p.begin() + long(carry.size()) + 1, p.end());
    std::vector<Tensor> next = ir::evaluate(*eq.programs[1], args);
    next.push_back(trip + nx::scalar(nx::int64, 1.));
    for (std::size_t k = 0; k < n; ++k) next.push_back(with_row(p[n + 1 + k], p[k], trip));
    next.push_back(with_row(p[2 * n + 1], stop, trip));
    return next;
  });
  const std::vector<Tensor> out =
      bind_loop(in.parts.max, carry, until, {in.until_captures().begin(), in.until_captures().end()}, step,
                {in.step_captures().begin(), in.step_captures().end()});
  Trips trips;
  trips.carry.assign(out.begin(), out.begin() + long(n));
  trips.count = out[n];
  trips.kept.assign(out.begin() + long(n) + 1, out.end());
  return trips;
}

// The backward pass: a program from (the outputs' cotangents, the trip
// count, the kept rows, the step's captures) to the cotangents of the
// tangents given (`given`: the carries', then the step captures'), a loop
// from the last trip back to the first.
Traced backward(const ir::Equation& eq, const Inputs& in, const Trips& trips) {
  const std::size_t n = in.parts.carries;
  const ad::Split split = ad::split(*eq.programs[1], in.step_types(), in.step_slots());
  std::vector<ir::TensorType> types;
  for (const Tensor& x : trips.carry) types.push_back(nx::ops::type_of(x));
  types.push_back(nx::ops::type_of(trips.count));
  for (const Tensor& k : trips.kept) types.push_back(nx::ops::type_of(k));
  for (const Tensor& c : in.step_captures()) types.push_back(nx::ops::type_of(c));
  return traced(types, [&](std::span<const Tensor> p) {
    const std::span<const Tensor> kept = p.subspan(n + 1, n + 1), captures = p.subspan(2 * n + 2);
    // The carry: the cotangents of the float carries and of the slotted
    // captures (summed over the trips), then the trip.
    std::vector<Tensor> carry;
    for (std::size_t k = 0; k < n; ++k)
      if (in.carry_slots[k]) carry.push_back(p[k]);
    const std::size_t carry_cts = carry.size();
    for (std::size_t j = 0; j < in.capture_slots.size(); ++j)
      if (in.capture_slots[j]) carry.push_back(nx::zeros_like(in.step_captures()[j]));
    carry.push_back(p[n] - nx::scalar(nx::int64, 1.));
    const std::vector<ir::TensorType> carry_types = types_of(carry);
    const Traced until = traced(carry_types, [&](std::span<const Tensor> q) {
      return std::vector<Tensor>{nx::less(q.back(), 0.)};
    });
    std::vector<ir::TensorType> step_types = carry_types;
    step_types.push_back(nx::ops::type_of(nx::scalar(nx::bool_, 0.)));
    for (const Tensor& k : kept) step_types.push_back(nx::ops::type_of(k));
    for (const Tensor& c : captures) step_types.push_back(nx::ops::type_of(c));
    const Traced step = traced(step_types, [&](std::span<const Tensor> q) {
      ir::Replay replay;  // (the step computed again: its adds were counted by the primal loop)
      const Tensor& trip = q[carry.size() - 1];
      std::vector<Tensor> args;
      for (std::size_t k = 0; k <= n; ++k) args.push_back(row_of(q[carry.size() + 1 + k], trip));
      args.insert(args.end(), q.begin() + long(carry.size() + n + 2), q.end());
      args.insert(args.end(), split.captures.begin(), split.captures.end());
      const std::vector<Tensor> computed = ir::evaluate(*split.primal, args);
      const auto slots = std::size_t(std::count(in.carry_slots.begin(), in.carry_slots.end(), true) +
                                     std::count(in.capture_slots.begin(), in.capture_slots.end(), true));
      std::vector<Tensor> fixed(slots);
      fixed.insert(fixed.end(), computed.end() - long(split.residuals), computed.end());
      std::vector<Tensor> cts;
      for (std::size_t k = 0, c = 0; k < n; ++k)
        cts.push_back(in.carry_slots[k] ? q[c++] : nx::ops::zeros_of(nx::ops::type_of(computed[k])));
      const std::vector<Tensor> in_cts = ad::transpose(*split.linear, fixed, cts);
      std::vector<Tensor> next(in_cts.begin(), in_cts.begin() + long(carry_cts));
      for (std::size_t j = carry_cts; j < slots; ++j) next.push_back(q[j] + in_cts[j]);
      next.push_back(trip - nx::scalar(nx::int64, 1.));
      return next;
    });
    std::vector<Tensor> step_captures(kept.begin(), kept.end());
    step_captures.insert(step_captures.end(), captures.begin(), captures.end());
    const std::vector<Tensor> out = bind_loop(trips.kept[0].shape()[0], carry, until, {}, step, step_captures);
    std::vector<Tensor> cts;  // (of the tangents given: the carries' that have one, the slotted captures')
    for (std::size_t k = 0, c = 0; k < n; ++k)
      if (in.carry_slots[k] && in.tangents[k].defined()) cts.push_back(out[c++]);
      else if (in.carry_slots[k]) ++c;
    cts.insert(cts.end(), out.begin() + long(carry_cts), out.end() - 1);
    return cts;
  });
}

// Reverse mode: the loop keeping its trips, and a linear call whose
// transpose runs back over them.
std::vector<Tensor> linearized(ad::JvpTrace& trace, const ir::Equation& eq, const Inputs& in) {
  const bool concrete = std::none_of(in.primals.begin(), in.primals.end(), [](const Tensor& t) { return t.is_traced(); });
  const Trips trips = concrete ? run_keeping(eq, in) : loop_keeping(eq, in);
  const Traced back = backward(eq, in, trips);
  auto call = std::make_shared<ir::LinearCall>();
  call->transpose = back.program;
  call->output_types = types_of(trips.carry);
  ir::Equation linear;
  linear.kind = ir::OpKind::linear_call;
  linear.info = call;
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < in.parts.carries; ++k)
    if (in.carry_slots[k] && in.tangents[k].defined()) inputs.push_back(in.tangents[k]);
  for (const Tensor& t : in.capture_tangents()) inputs.push_back(t);
  inputs.push_back(trips.count);
  inputs.insert(inputs.end(), trips.kept.begin(), trips.kept.end());
  inputs.insert(inputs.end(), in.step_captures().begin(), in.step_captures().end());
  inputs.insert(inputs.end(), back.captures.begin(), back.captures.end());
  const std::vector<Tensor> tangents = ir::bind_construct(linear, inputs, "rune::grad");
  return wrap(trace, in, trips.carry, tangents);
}

}  // namespace

std::vector<Tensor> iterate_jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  const Inputs in(eq, trace, inputs);
  if (!in.differentiated()) return ir::bind_construct(eq, in.primals, "rune::iterate");
  return trace.linearizing() ? linearized(trace, eq, in) : forward(trace, eq, in);
}

}  // namespace rune::constructs
