// rune::iterate under vmap: one iterate over every lane's carry. Until is
// computed for every lane (its stop gains the lanes' axis in front), and the
// loop runs while any lane runs. When lanes stop apart, the batched step
// keeps each stopped lane's carry bit for bit (a select), and never computes
// the step at a stopped lane's carry: a stopped lane takes a running lane's
// carry, stop and captures (the first running lane, its donor), so the step
// computed in its place is that lane's, lane_index() included, and dropped.
// rune::lanes inside such a step throws when it runs with a lane stopped: a
// stopped lane takes no trip of its own to gather.
#include "constructs/batched_program.hpp"
#include "constructs/iterate.hpp"
#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;

// A program over every lane's values: its parameters have `types`, `body`
// gives its results from their stand-ins.
struct Traced {
  std::shared_ptr<const ir::Program> program;
  std::vector<Tensor> captures;
};

template <class Body> Traced trace_lanes(batch::BatchTrace& outer, std::span<const ir::TensorType> types, Body body) {
  ir::StagingTrace staging(outer.entry_point());
  std::vector<Tensor> results;
  {
    nx::ops::TraceScope staged(staging);
    std::vector<Tensor> params;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    results = body(params);
  }
  Traced out;
  out.program = staging.finish(results);
  out.captures = staging.captures();
  return out;
}

// The lane values of `map` for every lane's values (those batched).
std::vector<Tensor> as_lanes(batch::BatchTrace& map, std::span<const Tensor> all, const std::vector<bool>& batched) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < all.size(); ++i) out.push_back(batched[i] ? map.wrap(all[i]) : all[i]);
  return out;
}

// Which parameters of a program its equations or results read.
std::vector<bool> parameters_read(const ir::Program& p) {
  std::vector<bool> read(p.types.size(), false);
  for (const ir::Equation& eq : p.equations)
    for (int v : eq.inputs) read[std::size_t(v)] = true;
  for (int v : p.results) read[std::size_t(v)] = true;
  std::vector<bool> out;
  for (int v : p.params) out.push_back(read[std::size_t(v)]);
  return out;
}

const char* const gathering_stopped_lanes =
    "a lane of rune::iterate that stopped takes no more trips, so a step cannot gather every lane; give every lane "
    "the same stop";

}  // namespace

std::vector<Tensor> iterate_batched(batch::BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  const IterateParts parts(eq, inputs.size());
  const std::int64_t lanes = trace.lanes();
  const std::size_t n = parts.carries;
  // Every carry is batched: lanes that stop apart make their carries differ.
  const LaneInputs in = lane_inputs(trace, inputs, n);
  const std::vector<Tensor>& values = in.values;
  const std::vector<bool>& batched = in.batched;
  auto type_of = [&](std::size_t i) { return nx::ops::type_of(values[i]); };

  // Until, for every lane: the stop gains the lanes' axis.
  bool until_batched = false;
  std::vector<ir::TensorType> until_types;
  for (std::size_t i = 0; i < n + parts.until_captures; ++i) until_types.push_back(type_of(i));
  std::vector<bool> until_in_batched(batched.begin(), batched.begin() + long(n + parts.until_captures));
  // The lanes that do not run in the map count as stopped from the start.
  const Tensor& running = trace.running();
  // (with `done`: a bool per lane after the carry, the lanes stopped before;
  // until runs again on their kept carry, and they add nothing then)
  const ir::TensorType done_type{nx::bool_, {lanes}};
  auto trace_until = [&](bool with_done) {
    std::vector<ir::TensorType> types = until_types;
    if (with_done) types.insert(types.begin() + long(n), done_type);
    return trace_lanes(trace, types, [&](std::span<const Tensor> all) {
      std::vector<Tensor> params(all.begin(), all.end());
      batch::BatchTrace map(trace.entry_point(), lanes, trace.axis());
      map.continue_from(trace);
      if (with_done) {
        map.run_only(nx::logical_not(params[n]), gathering_stopped_lanes);
        params.erase(params.begin() + long(n));
      }
      Tensor stop;
      {
        nx::ops::TraceScope mapped(map);
        const Tensor lane_stop = ir::evaluate(*eq.programs[0], as_lanes(map, params, until_in_batched))[0];
        map.lanes_of(lane_stop, &until_batched);
        stop = map.stacked(lane_stop);
      }
      if (running.defined()) {
        until_batched = true;
        stop = nx::logical_or(stop, along_lanes(nx::logical_not(running), stop));
      }
      return std::vector<Tensor>{stop};
    });
  };
  Traced until = trace_until(false);
  // Lanes that stop apart, and an until that adds to a total: the loop
  // carries which lanes stopped.
  const bool track_done = until_batched && ir::holds_unreplayed(*eq.programs[0]);
  if (track_done) until = trace_until(true);
  const ir::TensorType stop_type = until.program->types[std::size_t(until.program->results[0])];

  // The step, for every lane: with lanes that stop apart, a stopped lane
  // computes its donor's step, and keeps its carry.
  std::vector<ir::TensorType> step_types;
  for (std::size_t i = 0; i < n; ++i) step_types.push_back(type_of(i));
  if (track_done) step_types.push_back(done_type);
  step_types.push_back(stop_type);
  for (std::size_t i = n + parts.until_captures; i < inputs.size(); ++i) step_types.push_back(type_of(i));
  std::vector<bool> step_in_batched(n + 1, true);
  step_in_batched.insert(step_in_batched.end(), batched.begin() + long(n + parts.until_captures), batched.end());
  Traced step = trace_lanes(trace, step_types, [&](std::span<const Tensor> all) {
    std::vector<Tensor> params(all.begin(), all.end());
    if (track_done) params.erase(params.begin() + long(n));  // (the stop gives the next)
    std::vector<Tensor> in = params;
    Tensor stopped;  // (each lane's, when lanes stop apart)
    const std::vector<bool> reads = parameters_read(*eq.programs[1]);
    // (Of no lane there is no donor to choose, nor a trip: none runs.)
    if (until_batched && lanes > 0) {
      nx::Axes rest;
      for (std::int64_t d = 1; d < std::int64_t(stop_type.shape.size()); ++d) rest.push_back(d);
      stopped = rest.empty() ? params[n] : nx::all(params[n], rest);
      // Every stopped lane has the same donor, the first running lane: its
      // row selected in (cheaper than a gather, with the same values). A
      // lane index the step reads is a capture, so it is the donor's too.
      const Tensor first = nx::argmin(stopped, 0);
      for (std::size_t i = 0; i < in.size(); ++i)
        if (step_in_batched[i] && reads[i]) in[i] = from_donor(in[i], stopped, first);
    }
    batch::BatchTrace map(trace.entry_point(), lanes, trace.axis());
    map.continue_from(trace);
    // (a stopped lane's trip is its donor's: it adds nothing, runs no effect)
    if (stopped.defined()) map.run_only(nx::logical_not(stopped), gathering_stopped_lanes);
    std::vector<Tensor> out;
    {
      nx::ops::TraceScope mapped(map);
      for (const Tensor& y : ir::evaluate(*eq.programs[1], as_lanes(map, in, step_in_batched)))
        out.push_back(map.stacked(y));
    }
    if (stopped.defined())
      for (std::size_t k = 0; k < n; ++k) out[k] = nx::where(along_lanes(stopped, out[k]), params[k], out[k]);
    if (track_done) out.push_back(stopped);
    return out;
  });

  std::vector<Tensor> loop_inputs(values.begin(), values.begin() + long(n));
  if (track_done) loop_inputs.push_back(nx::zeros(nx::bool_, {lanes}));
  loop_inputs.insert(loop_inputs.end(), values.begin() + long(n), values.begin() + long(n + parts.until_captures));
  loop_inputs.insert(loop_inputs.end(), until.captures.begin(), until.captures.end());
  loop_inputs.insert(loop_inputs.end(), values.begin() + long(n + parts.until_captures), values.end());
  loop_inputs.insert(loop_inputs.end(), step.captures.begin(), step.captures.end());
  ir::Equation loop = eq;
  loop.info = ir::IterateInfo{parts.max, int(n + track_done), int(parts.until_captures + until.captures.size())};
  loop.programs = {until.program, step.program};
  std::vector<Tensor> outs = ir::bind_construct(loop, loop_inputs, "rune::iterate");
  outs.resize(n);  // (without done)
  for (Tensor& t : outs) t = trace.wrap(t);
  return outs;
}

}  // namespace rune::constructs
