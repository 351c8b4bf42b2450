#include "constructs/scan.hpp"

#include "ad/jvp_trace.hpp"

#include <optional>

#include "ad/transpose.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/derivatives.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;

using ad::JvpTrace;
using ad::transpose;

// Which inputs of a scan are carries, xs and captures.
struct Parts {
  std::int64_t length;
  std::size_t carries, xs, captures;
  Parts(const ir::Equation& eq, std::size_t inputs)
      : length(std::get<ir::ScanInfo>(eq.info).length),
        carries(std::size_t(std::get<ir::ScanInfo>(eq.info).carry_count)),
        xs(std::size_t(std::get<ir::ScanInfo>(eq.info).xs_count)), captures(inputs - carries - xs) {}
  bool is_xs(std::size_t i) const { return i >= carries && i < carries + xs; }
};

ir::TensorType row_type(const Tensor& t) {
  ir::TensorType r = nx::ops::type_of(t);
  r.shape.erase(r.shape.begin());
  return r;
}

Tensor or_zeros(const Tensor& t, const Tensor& like) { return t.defined() ? t : nx::zeros_like(like); }

ir::Equation scan_of(std::shared_ptr<const ir::Program> step, std::int64_t length, std::size_t carries,
                     std::size_t xs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::scan;
  eq.info = ir::ScanInfo{length, int(carries), int(xs)};
  eq.programs = {std::move(step)};
  return eq;
}

// The inputs of a scan that get a tangent: every float carry (a carry can
// gain one from the step), and xs and captures that have one.
std::vector<bool> tangent_slots(const Parts& parts, std::span<const Tensor> primals, std::span<const Tensor> tangents) {
  std::vector<bool> slot(primals.size());
  for (std::size_t i = 0; i < primals.size(); ++i)
    slot[i] = nx::is_inexact(primals[i].dtype()) && (i < parts.carries || tangents[i].defined());
  return slot;
}

// The step's JVP traced into `staging`: parameters in scan order (carries,
// xs, captures, each primal then tangent slots); returns the step's primal
// and tangent results (tangents for float carries and float ys).
struct StepJvp {
  std::vector<Tensor> primal_out, tangent_out;
  std::vector<bool> y_slots;
};

StepJvp trace_step_jvp(const ir::Equation& eq, const Parts& parts, std::span<const Tensor> primals,
                       const std::vector<bool>& slots, ir::StagingTrace& staging, ir::StagingTrace* linear) {
  const ir::Program& step = *eq.programs[0];
  std::vector<Tensor> p(primals.size()), t(primals.size());
  auto group = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i)
      p[i] = staging.add_param(parts.is_xs(i) ? row_type(primals[i]) : nx::ops::type_of(primals[i]));
    for (std::size_t i = from; i < to; ++i)
      if (slots[i]) {
        ir::TensorType type = parts.is_xs(i) ? row_type(primals[i]) : nx::ops::type_of(primals[i]);
        t[i] = linear ? linear->add_param(type) : staging.add_param(type);
      }
  };
  group(0, parts.carries);
  group(parts.carries, parts.carries + parts.xs);
  group(parts.carries + parts.xs, primals.size());
  JvpTrace jvp("rune::scan", linear);
  StepJvp out;
  {
    nx::ops::TraceScope scope(jvp);
    std::vector<Tensor> wrapped;
    for (std::size_t i = 0; i < p.size(); ++i) wrapped.push_back(jvp.wrap(p[i], t[i]));
    std::vector<Tensor> results = ir::evaluate(step, wrapped);
    for (std::size_t r = 0; r < results.size(); ++r) {
      Tensor primal = jvp.primal_of(results[r]);
      out.primal_out.push_back(primal);
      const bool slot = r < parts.carries ? bool(slots[r]) : nx::is_inexact(primal.dtype());
      if (r >= parts.carries) out.y_slots.push_back(slot);
      if (slot) out.tangent_out.push_back(or_zeros(jvp.tangent_of(results[r]), primal));
    }
  }
  return out;
}

// Forward mode: one scan over primals and tangents.
std::vector<Tensor> forward(JvpTrace& trace, const ir::Equation& eq, const Parts& parts,
                            std::span<const Tensor> primals, std::span<const Tensor> tangents) {
  std::vector<bool> slots = tangent_slots(parts, primals, tangents);
  ir::StagingTrace staging("rune::scan");
  StepJvp s;
  std::shared_ptr<const ir::Program> step;
  {
    nx::ops::TraceScope scope(staging);
    s = trace_step_jvp(eq, parts, primals, slots, staging, nullptr);
  }
  const std::size_t carry_slots = std::size_t(std::count(slots.begin(), slots.begin() + long(parts.carries), true));
  // results: carries and their tangents, then ys and their tangents
  std::vector<Tensor> results(s.primal_out.begin(), s.primal_out.begin() + long(parts.carries));
  results.insert(results.end(), s.tangent_out.begin(), s.tangent_out.begin() + long(carry_slots));
  results.insert(results.end(), s.primal_out.begin() + long(parts.carries), s.primal_out.end());
  results.insert(results.end(), s.tangent_out.begin() + long(carry_slots), s.tangent_out.end());
  step = staging.finish(results);
  std::vector<Tensor> inputs;
  auto group = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) inputs.push_back(primals[i]);
    for (std::size_t i = from; i < to; ++i)
      if (slots[i]) inputs.push_back(or_zeros(tangents[i], primals[i]));
  };
  group(0, parts.carries);
  group(parts.carries, parts.carries + parts.xs);
  const std::size_t xs_total = inputs.size() - parts.carries - carry_slots;
  group(parts.carries + parts.xs, primals.size());
  inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
  std::vector<Tensor> outs = ir::bind_construct(
      scan_of(step, parts.length, parts.carries + carry_slots, xs_total), inputs, "rune::scan");
  std::vector<Tensor> wrapped;
  std::size_t slot = 0;
  for (std::size_t k = 0; k < parts.carries; ++k)
    wrapped.push_back(slots[k] ? trace.wrap(outs[k], outs[parts.carries + slot++]) : outs[k]);
  const std::size_t ys = s.y_slots.size(), first_y = parts.carries + carry_slots;
  std::size_t y_slot = 0;
  for (std::size_t k = 0; k < ys; ++k)
    wrapped.push_back(s.y_slots[k] ? trace.wrap(outs[first_y + k], outs[first_y + ys + y_slot++]) : outs[first_y + k]);
  return wrapped;
}

// Linearization: a primal scan that emits residuals, and a linear scan.
std::vector<Tensor> linearized(JvpTrace& trace, const ir::Equation& eq, const Parts& parts,
                               std::span<const Tensor> primals, std::span<const Tensor> tangents) {
  std::vector<bool> slots = tangent_slots(parts, primals, tangents);
  ir::StagingTrace staging("rune::scan");
  ir::StagingTrace linear("rune::scan", false);
  StepJvp s;
  std::shared_ptr<const ir::Program> primal_step, linear_step;
  std::vector<Tensor> residuals;
  {
    nx::ops::TraceScope outer(staging);
    {
      nx::ops::TraceScope inner(linear);
      s = trace_step_jvp(eq, parts, primals, slots, staging, &linear);
    }
    linear_step = linear.finish(s.tangent_out);
    residuals = linear.captures();  // values of the primal step, one per row
    std::vector<Tensor> results = s.primal_out;
    results.insert(results.end(), residuals.begin(), residuals.end());
    primal_step = staging.finish(results);
  }
  // The primal scan: primal step params are carries, xs, captures, then the
  // staging trace's own captures.
  std::vector<Tensor> inputs(primals.begin(), primals.end());
  inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
  std::vector<Tensor> outs = ir::bind_construct(scan_of(primal_step, parts.length, parts.carries, parts.xs), inputs,
                                                "rune::scan");
  const std::size_t results = s.primal_out.size();
  std::vector<Tensor> stacked(outs.begin() + long(results), outs.end());
  // The linear scan: its step's params are the tangent slots (carries, xs,
  // captures) then the residuals; as a scan: carries, xs + residual rows,
  // captures.
  auto step = std::make_shared<ir::Program>(*linear_step);
  std::vector<int> params = step->params;
  const std::size_t carry_slots = std::size_t(std::count(slots.begin(), slots.begin() + long(parts.carries), true));
  const std::size_t xs_slots = std::size_t(std::count(slots.begin() + long(parts.carries),
                                                      slots.begin() + long(parts.carries + parts.xs), true));
  const std::size_t tangent_params = std::size_t(std::count(slots.begin(), slots.end(), true));
  step->params.assign(params.begin(), params.begin() + long(carry_slots + xs_slots));
  step->params.insert(step->params.end(), params.begin() + long(tangent_params), params.end());
  step->params.insert(step->params.end(), params.begin() + long(carry_slots + xs_slots),
                      params.begin() + long(tangent_params));
  std::vector<Tensor> linear_inputs;
  for (std::size_t i = 0; i < parts.carries + parts.xs; ++i)
    if (slots[i]) linear_inputs.push_back(or_zeros(tangents[i], primals[i]));
  linear_inputs.insert(linear_inputs.end(), stacked.begin(), stacked.end());
  for (std::size_t i = parts.carries + parts.xs; i < primals.size(); ++i)
    if (slots[i]) linear_inputs.push_back(tangents[i]);
  std::vector<Tensor> touts = ir::bind_construct(
      scan_of(step, parts.length, carry_slots, xs_slots + stacked.size()), linear_inputs, "rune::scan");
  std::vector<Tensor> wrapped;
  std::size_t slot = 0;
  for (std::size_t k = 0; k < parts.carries; ++k) wrapped.push_back(slots[k] ? trace.wrap(outs[k], touts[slot++]) : outs[k]);
  for (std::size_t k = 0; k < s.y_slots.size(); ++k)
    wrapped.push_back(s.y_slots[k] ? trace.wrap(outs[parts.carries + k], touts[slot++]) : outs[parts.carries + k]);
  return wrapped;
}

}  // namespace

std::vector<Tensor> scan_jvp(JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  std::vector<Tensor> primals, tangents;
  for (const Tensor& t : inputs) {
    primals.push_back(trace.primal_of(t));
    tangents.push_back(trace.tangent_of(t));
  }
  if (nx::ops::all_zero(tangents)) return ir::bind_construct(eq, primals, "rune::scan");
  Parts parts(eq, inputs.size());
  return trace.linearizing() ? linearized(trace, eq, parts, primals, tangents)
                             : forward(trace, eq, parts, primals, tangents);
}

std::vector<Tensor> scan_transpose(const ir::Equation& eq, std::span<const Tensor> inputs,
                                   std::span<const ir::TensorType> types, std::span<const Tensor> output_cts) {
  const Parts parts(eq, inputs.size());
  const ir::Program& step = *eq.programs[0];
  // The transposed step: carry (cotangents of the linear carries, sums for
  // the linear captures), xs (output cotangent rows, fixed xs rows),
  // captures (the fixed captures).
  ir::StagingTrace staging("rune::grad");
  std::shared_ptr<const ir::Program> transposed;
  std::vector<std::size_t> linear_caps;
  for (std::size_t i = parts.carries + parts.xs; i < inputs.size(); ++i)
    if (!inputs[i].defined()) linear_caps.push_back(i);
  const std::size_t ys = step.results.size() - parts.carries;
  {
    nx::ops::TraceScope scope(staging);
    std::vector<Tensor> carry_ct, cap_sum, y_ct, params(inputs.size());
    for (std::size_t k = 0; k < parts.carries; ++k) carry_ct.push_back(staging.add_param(types[k]));
    for (std::size_t i : linear_caps) cap_sum.push_back(staging.add_param(types[i]));
    for (std::size_t k = 0; k < ys; ++k) y_ct.push_back(staging.add_param(step.types[std::size_t(step.results[parts.carries + k])]));
    for (std::size_t i = parts.carries; i < parts.carries + parts.xs; ++i)
      if (inputs[i].defined()) {
        ir::TensorType row = types[i];
        row.shape.erase(row.shape.begin());
        params[i] = staging.add_param(row);
      }
    for (std::size_t i = parts.carries + parts.xs; i < inputs.size(); ++i)
      if (inputs[i].defined()) params[i] = staging.add_param(types[i]);
    std::vector<Tensor> result_cts = carry_ct;
    result_cts.insert(result_cts.end(), y_ct.begin(), y_ct.end());
    std::vector<Tensor> cts = transpose(step, params, result_cts);
    std::vector<Tensor> results;
    for (std::size_t k = 0; k < parts.carries; ++k) results.push_back(or_zeros(cts[k], carry_ct[k]));
    for (std::size_t j = 0; j < linear_caps.size(); ++j) results.push_back(cap_sum[j] + cts[linear_caps[j]]);
    for (std::size_t i = parts.carries; i < parts.carries + parts.xs; ++i)
      if (!inputs[i].defined()) results.push_back(cts[i]);
    transposed = staging.finish(results);
  }
  // Run it backward: reverse the rows going in and the stacked rows coming out.
  std::vector<Tensor> in;
  for (std::size_t k = 0; k < parts.carries; ++k) in.push_back(or_zeros(output_cts[k], nx::ops::zeros_of(types[k])));
  for (std::size_t i : linear_caps) in.push_back(nx::ops::zeros_of(types[i]));
  for (std::size_t k = 0; k < ys; ++k) {
    ir::TensorType stacked = step.types[std::size_t(step.results[parts.carries + k])];
    stacked.shape.insert(stacked.shape.begin(), parts.length);
    in.push_back(nx::flip(or_zeros(output_cts[parts.carries + k], nx::ops::zeros_of(stacked)), {0}));
  }
  std::size_t fixed_xs = 0;
  for (std::size_t i = parts.carries; i < parts.carries + parts.xs; ++i)
    if (inputs[i].defined()) in.push_back(nx::flip(inputs[i], {0})), ++fixed_xs;
  for (std::size_t i = parts.carries + parts.xs; i < inputs.size(); ++i)
    if (inputs[i].defined()) in.push_back(inputs[i]);
  in.insert(in.end(), staging.captures().begin(), staging.captures().end());
  std::vector<Tensor> outs = ir::bind_construct(
      scan_of(transposed, parts.length, parts.carries + linear_caps.size(), ys + fixed_xs), in, "rune::grad");
  std::vector<Tensor> cts(inputs.size());
  for (std::size_t k = 0; k < parts.carries; ++k)
    if (!inputs[k].defined()) cts[k] = outs[k];
  for (std::size_t j = 0; j < linear_caps.size(); ++j) cts[linear_caps[j]] = outs[parts.carries + j];
  std::size_t y = parts.carries + linear_caps.size();
  for (std::size_t i = parts.carries; i < parts.carries + parts.xs; ++i)
    if (!inputs[i].defined()) cts[i] = nx::flip(outs[y++], {0});
  return cts;
}

}  // namespace rune::constructs
