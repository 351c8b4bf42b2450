#include "batch/batch_trace.hpp"

#include <utility>

#include <boost/container/small_vector.hpp>

#include "ir/construct.hpp"
#include "ir/staging.hpp"
#include "rune/check.hpp"
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "ops/errors.hpp"
#include "ops/nan_hunt.hpp"
#include "rune/nx.hpp"

namespace rune::batch {

namespace {
// A lane's value has no elements of its own to read (nx::item throws,
// naming rune::vmap): primal() is null.
struct BatchTracer final : nx::detail::Tracer {
  nx::Tensor lanes;
  std::string_view by;
  BatchTracer(nx::Tensor l, std::string_view b) : lanes(std::move(l)), by(b) {}
  boost::intrusive_ptr<nx::detail::TensorImpl> primal() const override { return nullptr; }
  std::string_view traced_by() const override { return by; }
};

nx::Shape lane_shape(const nx::Shape& all) { return nx::Shape(all.begin() + 1, all.end()); }
}  // namespace

BatchTrace::BatchTrace(std::string_view entry_point, std::int64_t lanes, std::uint64_t axis)
    : Trace(entry_point, false), lanes_(lanes), axis_(axis) {}

void BatchTrace::run_only(const nx::Tensor& lanes, std::string why) {
  running_ = running_.defined() ? nx::logical_and(running_, lanes) : lanes;
  gathering_refused_ = std::move(why);
}

void BatchTrace::continue_from(const BatchTrace& map) {
  per_lane_totals_ = map.per_lane_totals_;
  running_ = map.running_;
  gathering_refused_ = map.gathering_refused_;
}

BatchTrace* innermost_map(std::uint64_t axis) {
  for (int level = nx::ops::trace_depth(); level > 0; --level)
    if (auto* map = dynamic_cast<BatchTrace*>(&nx::ops::trace_at(level)))
      if (axis == 0 || map->axis() == axis) return map;
  return nullptr;
}

BatchTrace& named_map(std::string_view api, std::uint64_t axis) {
  BatchTrace* map = innermost_map(axis);
  if (!map || axis == 0) nx::ops::fail(api, "no map of this axis is running (name one with rune::vmap(f, axis))");
  return *map;
}

nx::Tensor BatchTrace::wrap(const nx::Tensor& all_lanes) {
  boost::intrusive_ptr<nx::detail::TensorImpl> t(new nx::detail::TensorImpl);
  t->dtype = all_lanes.dtype();
  t->shape = lane_shape(all_lanes.shape());
  t->placement = all_lanes.placement();
  boost::intrusive_ptr<BatchTracer> tracer(new BatchTracer(all_lanes, entry_point()));
  adopt(*tracer);
  t->tracer = tracer;
  return nx::Tensor(std::move(t));
}

nx::Tensor BatchTrace::lanes_of(const nx::Tensor& t, bool* batched) const {
  *batched = owns(t);
  return *batched ? static_cast<const BatchTracer&>(*t.impl()->tracer).lanes : t;
}

nx::Tensor BatchTrace::stacked(const nx::Tensor& t) const {
  bool batched = false;
  nx::Tensor v = lanes_of(t, &batched);
  if (batched) return v;
  nx::Shape all = v.shape();
  all.insert(all.begin(), lanes_);
  return nx::broadcast_to(v, all);
}

// A collective of this map: every lane's value (the same in every lane), or
// a transposed gather's sum over the lanes. One of another map (named
// outside this one): computed by that map for every lane of this one at
// once, the lanes of this map kept on axis 0.
nx::Tensor BatchTrace::collective(ir::Prim p, const nx::Tensor& operand, const ir::Params& params) {
  const bool gather = p == ir::Prim::lanes_gather;
  if (runs_map(std::uint64_t(params.axis))) {
    // A program traced in a map of another lane count (compiled, or read
    // from text) carries that count in its types: refused, not reshaped.
    if (params.shape[0] != lanes_)
      nx::ops::fail(nx::ops::info(p).api, "the program was traced in a map of " + std::to_string(params.shape[0]) +
                                              " lanes; this map has " + std::to_string(lanes_));
    if (gather && running_.defined())
      nx::check(nx::all(running_), std::tuple<>{},
                [why = "rune::lanes: " + gathering_refused_](const nx::Index&, std::tuple<>) {
                  return std::make_exception_ptr(std::invalid_argument(why));
                });
    const nx::Tensor all = stacked(operand);
    if (!gather) return wrap(nx::sum(all, {0}, false, all.dtype()));
    nx::Shape rows = all.shape(), every = all.shape();
    rows.insert(rows.begin(), 1);
    every.insert(every.begin(), lanes_);
    return wrap(nx::broadcast_to(nx::reshape(all, rows), every));
  }
  bool batched = false;
  const nx::Tensor value = lanes_of(operand, &batched);
  if (!batched) return nx::ops::bind(p, {value}, params);  // (the same in every lane of this map)
  if (gather) return wrap(nx::moveaxis(nx::ops::bind(p, {value}, params), 0, 1));
  return wrap(nx::ops::bind(p, {nx::moveaxis(value, 1, 0)}, params));
}

nx::Tensor BatchTrace::process(ir::Prim p, std::span<const nx::Tensor> operands, const ir::Params& params,
                               const ir::TensorType& type) {
  if (nx::ops::info(p).family == nx::ops::Family::collective) return collective(p, operands[0], params);
  std::vector<nx::Tensor> values;
  boost::container::small_vector<bool, 4> batched(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) values.push_back(lanes_of(operands[i], &batched[i]));
  const auto& rules = nx::ops::rules(p);
  const std::string_view api = nx::ops::info(p).api;
  // Hunting NaNs, the rule's primitives go unchecked and the result is
  // checked by lane below, to name the lane (of the outermost map, whose
  // values are concrete, when maps nest).
  const bool hunting = nx::ops::nan_hunt.load(std::memory_order_relaxed);
  const nx::ops::NanHuntByLane by_lane(hunting);
  nx::Tensor out = nx::ops::call_rule("batching", api, [&] {
    return rules.batch(p, values, std::span<const bool>(batched.data(), batched.size()), params, lanes_);
  });
  nx::Shape want = type.shape;
  want.insert(want.begin(), lanes_);
  if (out.shape() != want || out.dtype() != type.dtype)
    nx::ops::internal_error("the batching rule of " + std::string(api),
                            "gave " + nx::ops::describe(out) + " for lanes of " + nx::ops::to_string(type));
  if (lanes_ > 0 && out.is_traced()) {  // (for a compiled NaN hunt to name the lane)
    if (nx::ops::Trace* below = nx::ops::find_trace(std::span(&out, 1), api)) below->holds_lanes(out, lanes_);
  } else if (hunting && lanes_ > 0) {
    nx::ops::check_lanes_made_finite(api, values, out);
  }
  return wrap(out);
}

// An effect (a check, a callback) of lane i, which runs only when the lane
// runs: a cond on the lane's flag, whose other branch gives zeros.
std::vector<nx::Tensor> BatchTrace::if_running(const ir::Equation& eq, std::span<const nx::Tensor> lane,
                                                std::int64_t i) {
  std::vector<ir::TensorType> types;
  for (const nx::Tensor& t : lane) types.push_back(nx::ops::type_of(t));
  auto branch = [&](bool runs) {
    ir::StagingTrace staging(entry_point());
    nx::ops::TraceScope scope(staging);
    std::vector<nx::Tensor> params, results;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    if (runs) results = ir::bind_construct(eq, params, entry_point());
    else
      for (const ir::TensorType& t : ir::construct_output_types(eq, types)) results.push_back(nx::ops::zeros_of(t));
    return staging.finish(results);
  };
  ir::Equation cond;
  cond.kind = ir::OpKind::cond;
  cond.programs = {branch(false), branch(true)};
  std::vector<nx::Tensor> inputs{nx::cast(nx::get(running_, i), nx::int32)};
  inputs.insert(inputs.end(), lane.begin(), lane.end());
  return ir::bind_construct(cond, inputs, entry_point());
}

// A construct with a batching rule applies it; the others run lane by lane:
// each lane's inputs (a row of each batched one), the outputs stacked. A
// callback thus runs once per lane, on that lane's values; an effect only on
// the lanes running.
std::vector<nx::Tensor> BatchTrace::process_construct(const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  // (meanwhile what is bound on values of no map runs once for every lane
  // at once, at the level below this map: not this map's, see maps_lanes)
  struct AllLanes {
    bool& computing;
    bool before = std::exchange(computing, true);
    ~AllLanes() { computing = before; }
  } all_lanes{computing_all_lanes_};
  if (auto batch = ir::construct_rules(eq.kind).batch) return batch(*this, eq, inputs);
  std::vector<std::vector<nx::Tensor>> rows;
  for (std::int64_t i = 0; i < lanes_; ++i) {
    std::vector<nx::Tensor> lane;
    for (const nx::Tensor& t : inputs) {
      bool batched = false;
      nx::Tensor v = lanes_of(t, &batched);
      lane.push_back(batched ? nx::get(v, i) : v);
    }
    rows.push_back(running_.defined() && ir::has_effect(eq) ? if_running(eq, lane, i)
                                                         : ir::bind_construct(eq, lane, entry_point()));
  }
  std::vector<nx::Tensor> out;
  if (rows.empty()) {  // no lane runs it: empty outputs of its types
    std::vector<ir::TensorType> lane_types;
    for (const nx::Tensor& t : inputs) lane_types.push_back(nx::ops::type_of(t));
    for (ir::TensorType type : ir::construct_output_types(eq, lane_types)) {
      type.shape.insert(type.shape.begin(), 0);
      out.push_back(wrap(nx::zeros(type.dtype, type.shape)));
    }
    return out;
  }
  for (std::size_t k = 0; k < rows[0].size(); ++k) {
    std::vector<nx::Tensor> column;
    for (auto& row : rows) column.push_back(row[k]);
    out.push_back(wrap(nx::stack(column)));
  }
  return out;
}

}  // namespace rune::batch
