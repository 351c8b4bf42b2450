// rune::Total and rune::collect: an add to a total is an effect executed
// with the program (so it counts once per execution: when a compiled
// function runs, once per trip of a loop), which adds into the innermost
// collect of that total open on this thread. A collect runs its body with
// its total open. Under a map, the lanes' adds to a total collected outside
// the map are one total_add_lanes, which adds the lanes in turn (the bits of
// the lanes run one at a time); a total collected inside it has one value
// per lane. Derivatives: the body's linearization, with the total carried by
// the primal collect (adds have no derivative); a replay (remat's backward
// pass) leaves adds out.
#include <atomic>

#include "ad/jvp_trace.hpp"
#include "ad/split.hpp"
#include "batch/batch_trace.hpp"
#include "constructs/batched_program.hpp"
#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/sum_rows.hpp"
#include "ops/type_checks.hpp"
#include "rune/nx.hpp"
#include "rune/total.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;

std::uint64_t total_of(const ir::Equation& eq) { return std::get<ir::TotalInfo>(eq.info).total; }

// The collects open on this thread, innermost last.
struct Open {
  std::uint64_t total;
  Tensor sum;
};
thread_local std::vector<Open*> open_totals;

class Opened {
 public:
  Opened(std::uint64_t total, Tensor zero) : open_{total, std::move(zero)} { open_totals.push_back(&open_); }
  ~Opened() { open_totals.pop_back(); }
  Opened(const Opened&) = delete;
  Opened& operator=(const Opened&) = delete;
  const Tensor& sum() const { return open_.sum; }

 private:
  Open open_;
};

// Whether a value of this type adds into sum keeping sum's dtype and shape:
// the same dtype (a number type), and a shape that broadcasts to sum's.
bool adds_into(const ir::TensorType& value, const Tensor& sum) {
  if (value.dtype != sum.dtype() || value.dtype == nx::bool_ || value.shape.size() > sum.shape().size()) return false;
  const std::size_t skip = sum.shape().size() - value.shape.size();
  for (std::size_t d = 0; d < value.shape.size(); ++d)
    if (value.shape[d] != 1 && value.shape[d] != sum.shape()[skip + d]) return false;
  return true;
}

// The sum of the innermost collect of `total` open, or null: none is.
Tensor* open_sum(std::uint64_t total) {
  for (auto open = open_totals.rbegin(); open != open_totals.rend(); ++open)
    if ((*open)->total == total) return &(*open)->sum;
  return nullptr;
}

void refuse(const ir::TensorType& value, const Tensor& sum) {
  if (!adds_into(value, sum))
    nx::ops::fail("rune::Total::add", nx::ops::to_string(value) + " added to a total of " + nx::ops::describe(sum));
}

void add_eagerly(std::uint64_t total, const Tensor& value) {
  if (Tensor* sum = open_sum(total)) {
    refuse(nx::ops::type_of(value), *sum);
    *sum = *sum + value;
  }
}

// Each lane (a row of `lanes`) added in turn, as a loop over the lanes adds.
void add_lanes_eagerly(std::uint64_t total, const Tensor& lanes) {
  Tensor* sum = open_sum(total);
  if (!sum) return;
  const std::int64_t count = lanes.shape()[0];
  nx::Shape lane(lanes.shape().begin() + 1, lanes.shape().end());
  refuse({lanes.dtype(), lane}, *sum);
  // (each lane broadcast into the total's shape: its leading axes of 1 first)
  lane.insert(lane.begin(), std::size_t(sum->ndim()) - lane.size(), 1);
  lane.insert(lane.begin(), count);
  nx::Shape rows = sum->shape();
  rows.insert(rows.begin(), count);
  const Tensor out = nx::ops::copy(*sum);
  nx::ops::fold_rows_into(nx::ops::contiguous(nx::broadcast_to(nx::reshape(lanes, lane), rows)), out);
  *sum = out;
}

// ---- total_add

std::vector<Tensor> add_jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  return ir::bind_construct(eq, std::vector<Tensor>{trace.primal_of(inputs[0])}, "rune::Total::add");
}

// Every lane adds its value (a value the same in every lane too), but a lane
// that computes what it does not run (BatchTrace::running) adds nothing: -0,
// which leaves every sum as it is.
Tensor running_lanes(batch::BatchTrace& trace, Tensor lanes) {
  const Tensor& running = trace.running();
  if (!running.defined()) return lanes;
  nx::Shape along_lanes(std::size_t(lanes.ndim()), 1);
  along_lanes[0] = trace.lanes();
  return nx::where(nx::reshape(running, along_lanes), lanes, -0.);
}

// Into a total collected inside the map, each lane into its own; into one
// collected outside it, the lanes in turn (total_add_lanes).
std::vector<Tensor> add_batched(batch::BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  const Tensor lanes = running_lanes(trace, trace.stacked(inputs[0]));
  if (trace.collects_per_lane(total_of(eq))) return ir::bind_construct(eq, std::vector<Tensor>{lanes}, "rune::Total::add");
  ir::Equation in_turn = eq;
  in_turn.kind = ir::OpKind::total_add_lanes;
  return ir::bind_construct(in_turn, std::vector<Tensor>{lanes}, "rune::Total::add");
}

// A map of lanes' adds: this map's lanes lead, each holding the inner lanes.
// Into a total collected inside this map, each of its lanes folds its inner
// lanes into its own total (the inner lanes moved first); into one
// collected outside, all of them in turn, this map's lane by lane (C order).
std::vector<Tensor> lanes_batched(batch::BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  const Tensor lanes = running_lanes(trace, trace.stacked(inputs[0]));
  nx::Shape flat(lanes.shape().begin() + 1, lanes.shape().end());
  flat[0] *= lanes.shape()[0];
  const Tensor in_turn = trace.collects_per_lane(total_of(eq)) ? nx::moveaxis(lanes, 1, 0) : nx::reshape(lanes, flat);
  return ir::bind_construct(eq, std::vector<Tensor>{in_turn}, "rune::Total::add");
}

// ---- collect

std::vector<ir::TensorType> collect_types(const ir::Equation& eq, std::span<const ir::TensorType> in) {
  auto fail = [](const std::string& m) { nx::ops::fail("rune::collect", m); };
  if (eq.programs.size() != 1) fail("a collect has one body program, not " + std::to_string(eq.programs.size()));
  if (in.empty()) fail("a collect takes its zero first");
  const ir::Program& body = *eq.programs[0];
  if (body.params.size() + 1 != in.size())
    fail("the body takes " + std::to_string(body.params.size()) + " values, the collect gives " +
         std::to_string(in.size() - 1));
  for (std::size_t k = 0; k < body.params.size(); ++k)
    if (body.types[std::size_t(body.params[k])] != in[k + 1])
      fail("the body takes " + nx::ops::to_string(body.types[std::size_t(body.params[k])]) + " as value " +
           std::to_string(k) + ", the collect gives " + nx::ops::to_string(in[k + 1]));
  std::vector<ir::TensorType> out;
  for (int v : body.results) out.push_back(body.types[std::size_t(v)]);
  out.push_back(in[0]);
  return out;
}

std::vector<Tensor> collect_eager(const ir::Equation& eq, std::span<const Tensor> inputs) {
  Opened open(total_of(eq), inputs[0]);
  std::vector<Tensor> out = ir::evaluate(*eq.programs[0], inputs.subspan(1));
  out.push_back(open.sum());
  return out;
}

// Forward mode: one collect of the body's forward derivative.
std::vector<Tensor> collect_forward(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> primals,
                                   std::span<const Tensor> tangents, std::span<const ir::TensorType> types,
                                   const std::vector<bool>& slots) {
  const ad::Forward derivative = ad::forward(*eq.programs[0], types, slots);
  ir::Equation forward = eq;
  forward.programs = {derivative.program};
  std::vector<Tensor> in(primals.begin(), primals.end());
  in.insert(in.end(), tangents.begin(), tangents.end());
  in.insert(in.end(), derivative.captures.begin(), derivative.captures.end());
  std::vector<Tensor> out = ir::bind_construct(forward, in, "rune::collect");
  const std::size_t results = (out.size() - 1) / 2;
  std::vector<Tensor> wrapped;
  for (std::size_t k = 0; k < results; ++k)
    wrapped.push_back(nx::is_inexact(out[k].dtype()) ? trace.wrap(out[k], out[results + k]) : out[k]);
  wrapped.push_back(out.back());
  return wrapped;
}

std::vector<Tensor> collect_jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  std::vector<Tensor> primals, tangents;
  std::vector<bool> slots;
  std::vector<ir::TensorType> types;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    primals.push_back(trace.primal_of(inputs[i]));
    const Tensor t = trace.tangent_of(inputs[i]);
    if (i == 0) continue;  // (the zero: the total has no derivative)
    types.push_back(nx::ops::type_of(primals.back()));
    slots.push_back(t.defined());
    if (t.defined()) tangents.push_back(t);
  }
  if (tangents.empty()) return ir::bind_construct(eq, primals, "rune::collect");
  if (!trace.linearizing()) return collect_forward(trace, eq, primals, tangents, types, slots);
  const ad::Split parts = ad::split(*eq.programs[0], types, slots);
  ir::Equation primal = eq;
  primal.programs = {parts.primal};
  std::vector<Tensor> in = primals;
  in.insert(in.end(), parts.captures.begin(), parts.captures.end());
  std::vector<Tensor> out = ir::bind_construct(primal, in, "rune::collect");
  const Tensor total = out.back();
  out.pop_back();
  const std::size_t results = out.size() - parts.residuals;
  std::vector<Tensor> linear_in = tangents;
  linear_in.insert(linear_in.end(), out.begin() + long(results), out.end());
  const std::vector<Tensor> out_tangents = ir::evaluate(*parts.linear, linear_in);
  std::vector<Tensor> wrapped;
  for (std::size_t k = 0; k < results; ++k)
    wrapped.push_back(nx::is_inexact(out[k].dtype()) ? trace.wrap(out[k], out_tangents[k]) : out[k]);
  wrapped.push_back(total);
  return wrapped;
}

// Under a map: one collect whose total has one value per lane.
std::vector<Tensor> collect_batched(batch::BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  LaneInputs in = lane_inputs(trace, inputs, 1);  // (the zero: one total per lane)
  const std::uint64_t total = total_of(eq);
  BatchedProgram body = batch_program(trace, *eq.programs[0], types_of(std::span<const Tensor>(in.values).subspan(1)),
                                      std::vector<bool>(in.batched.begin() + 1, in.batched.end()), {},
                                      [total](batch::BatchTrace& map) { map.collect_per_lane(total); });
  ir::Equation collect = eq;
  collect.programs = {body.program};
  in.values.insert(in.values.end(), body.captures.begin(), body.captures.end());
  std::vector<Tensor> out = ir::bind_construct(collect, in.values, "rune::collect");
  for (std::size_t k = 0; k + 1 < out.size(); ++k)
    if (body.results_batched[k]) out[k] = trace.wrap(out[k]);
  out.back() = trace.wrap(out.back());
  return out;
}

void set_total(ir::Equation& eq, std::int64_t count, std::span<const int>) {
  eq.info = ir::TotalInfo{std::uint64_t(count)};
}

}  // namespace

const ir::ConstructRules total_add_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::Total::add";
  r.effect = true;
  r.replayed = false;
  r.every_lane = true;
  r.text = ir::TextForm{"total_add", "total", {"value"}, {}};
  r.output_types = [](const ir::Equation&, std::span<const ir::TensorType> in) {
    if (in.size() != 1) nx::ops::fail("rune::Total::add", "an add takes one value");
    return std::vector<ir::TensorType>{};
  };
  r.eager = [](const ir::Equation& eq, std::span<const Tensor> inputs) {
    add_eagerly(total_of(eq), inputs[0]);
    return std::vector<Tensor>{};
  };
  r.jvp = add_jvp;
  r.batch = add_batched;
  r.count = [](const ir::Equation& eq) { return std::int64_t(total_of(eq)); };
  r.group_sizes = [](const ir::Equation&, std::size_t inputs) { return std::vector<int>{int(inputs)}; };
  r.from_text = set_total;
  return r;
}();

const ir::ConstructRules total_add_lanes_rules = [] {
  ir::ConstructRules r = total_add_rules;
  r.text = ir::TextForm{"total_add_lanes", "total", {"lanes"}, {}};
  r.output_types = [](const ir::Equation&, std::span<const ir::TensorType> in) {
    if (in.size() != 1 || in[0].shape.empty())
      nx::ops::fail("rune::Total::add", "an add of lanes takes one value with the lanes along its first axis");
    return std::vector<ir::TensorType>{};
  };
  r.eager = [](const ir::Equation& eq, std::span<const Tensor> inputs) {
    add_lanes_eagerly(total_of(eq), inputs[0]);
    return std::vector<Tensor>{};
  };
  r.batch = lanes_batched;
  return r;
}();

const ir::ConstructRules collect_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::collect";
  r.text = ir::TextForm{"collect", "total", {"zero", "captures"}, {"body"}};
  r.output_types = collect_types;
  r.eager = collect_eager;
  r.jvp = collect_jvp;
  r.batch = collect_batched;
  r.count = [](const ir::Equation& eq) { return std::int64_t(total_of(eq)); };
  r.group_sizes = [](const ir::Equation&, std::size_t inputs) { return std::vector<int>{1, int(inputs) - 1}; };
  r.from_text = set_total;
  r.param_source = [](const ir::Equation&, std::size_t, std::size_t param, bool* row) {
    *row = false;
    return int(param) + 1;
  };
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

std::uint64_t fresh_total() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}

void add_to_total(std::uint64_t id, const nx::Tensor& value) {
  nx::ops::check_defined("rune::Total::add", std::span<const nx::Tensor>(&value, 1));
  ir::Equation eq;
  eq.kind = ir::OpKind::total_add;
  eq.info = ir::TotalInfo{id};
  ir::bind_construct(eq, std::span<const nx::Tensor>(&value, 1), "rune::Total::add");
}

std::vector<nx::Tensor> bind_collect(std::uint64_t id, std::shared_ptr<const ir::Program> body,
                                     std::span<const nx::Tensor> inputs) {
  nx::ops::check_defined("rune::collect", inputs.first(1));
  ir::Equation eq;
  eq.kind = ir::OpKind::collect;
  eq.info = ir::TotalInfo{id};
  eq.programs = {std::move(body)};
  return ir::bind_construct(eq, inputs, "rune::collect");
}

nx::Tensor collect_eagerly(std::uint64_t id, const nx::Tensor& zero, const std::function<void()>& f) {
  nx::ops::check_defined("rune::collect", std::span<const nx::Tensor>(&zero, 1));
  constructs::Opened open(id, zero);
  f();
  return open.sum();
}

}  // namespace rune::detail
