// rune::iterate: its entry points below the template, its type, eager,
// derivative and stepping rules, its text, and its entry in the construct
// table (batching: iterate_batching.cpp).
#include "constructs/iterate.hpp"

#include "ad/jvp_trace.hpp"
#include "constructs/elements.hpp"
#include "constructs/table.hpp"
#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/check.hpp"
#include "rune/iterate.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

using nx::Tensor;

IterateParts::IterateParts(const ir::Equation& eq, std::size_t inputs)
    : max(std::get<ir::IterateInfo>(eq.info).max),
      carries(std::size_t(std::get<ir::IterateInfo>(eq.info).carry_count)),
      until_captures(std::size_t(std::get<ir::IterateInfo>(eq.info).until_captures)),
      step_captures(inputs - carries - until_captures) {}

std::vector<Tensor> IterateParts::until_args(std::span<const Tensor> inputs, std::span<const Tensor> carry) const {
  std::vector<Tensor> args(carry.begin(), carry.end());
  args.insert(args.end(), inputs.begin() + long(carries), inputs.begin() + long(carries + until_captures));
  return args;
}

std::vector<Tensor> IterateParts::step_args(std::span<const Tensor> inputs, std::span<const Tensor> carry,
                                            const Tensor& stop) const {
  std::vector<Tensor> args(carry.begin(), carry.end());
  args.push_back(stop);
  args.insert(args.end(), inputs.begin() + long(carries + until_captures), inputs.end());
  return args;
}

std::string still_running(std::int64_t max, const nx::Index& lane) {
  std::string message = "until is still false after max = " + std::to_string(max) + " steps";
  for (std::int64_t i : lane) message += ", in lane " + std::to_string(i);
  return message;
}

namespace {

// Whether every element of a stop is true.
bool all_stopped(const Tensor& stop) { return nx::item(nx::all(stop)) != 0.; }

// The error of a loop whose stop is still false after max steps.
void fail_still_running(const ir::Equation& eq, const Tensor& stop) {
  nx::ops::fail("rune::iterate", still_running(std::get<ir::IterateInfo>(eq.info).max, *first_false(stop)));
}

std::vector<ir::TensorType> output_types(const ir::Equation& eq, std::span<const ir::TensorType> in) {
  auto fail = [](const std::string& m) { nx::ops::fail("rune::iterate", m); };
  if (eq.programs.size() != 2) fail("an iterate has an until and a step program, not " + std::to_string(eq.programs.size()) + " programs");
  const IterateParts parts(eq, in.size());
  if (parts.carries + parts.until_captures > in.size()) fail("the groups of its inputs hold more than its inputs");
  const ir::Program& until = *eq.programs[0];
  const ir::Program& step = *eq.programs[1];
  auto params_fit = [&](const ir::Program& p, std::string_view name, const std::vector<ir::TensorType>& want) {
    if (p.params.size() != want.size())
      fail("the " + std::string(name) + " takes " + std::to_string(p.params.size()) + " values, the iterate gives " +
           std::to_string(want.size()));
    for (std::size_t k = 0; k < want.size(); ++k)
      if (p.types[std::size_t(p.params[k])] != want[k])
        fail("the " + std::string(name) + " takes " + nx::ops::to_string(p.types[std::size_t(p.params[k])]) +
             " as value " + std::to_string(k) + ", the iterate gives " + nx::ops::to_string(want[k]));
  };
  std::vector<ir::TensorType> carry(in.begin(), in.begin() + long(parts.carries));
  std::vector<ir::TensorType> want = carry;
  want.insert(want.end(), in.begin() + long(parts.carries), in.begin() + long(parts.carries + parts.until_captures));
  params_fit(until, "until", want);
  if (until.results.size() != 1 || until.types[std::size_t(until.results[0])].dtype != nx::bool_)
    fail("until must return one bool tensor");
  want = carry;
  want.push_back(until.types[std::size_t(until.results[0])]);
  want.insert(want.end(), in.begin() + long(parts.carries + parts.until_captures), in.end());
  params_fit(step, "step", want);
  std::vector<ir::TensorType> returned;
  for (int v : step.results) returned.push_back(step.types[std::size_t(v)]);
  if (returned != carry) fail("the step returns a carry of other types than it receives");
  return carry;
}

// The loop on concrete inputs: the last carry, and the number of steps.
std::pair<std::vector<Tensor>, std::int64_t> run(const ir::Equation& eq, std::span<const Tensor> inputs) {
  const IterateParts parts(eq, inputs.size());
  std::vector<Tensor> carry(inputs.begin(), inputs.begin() + long(parts.carries));
  for (std::int64_t trip = 0;; ++trip) {
    const Tensor stop = ir::evaluate(*eq.programs[0], parts.until_args(inputs, carry))[0];
    if (all_stopped(stop)) return {carry, trip};
    if (trip == parts.max) fail_still_running(eq, stop);
    carry = ir::evaluate(*eq.programs[1], parts.step_args(inputs, carry, stop));
  }
}

std::vector<Tensor> eager(const ir::Equation& eq, std::span<const Tensor> inputs) { return run(eq, inputs).first; }

// The derivative: the loop as a scan of max trips whose trips after the
// stop keep the carry (selected, so bit for bit) and compute the step at the
// last carry it took (a value it was computed at, so its derivative there
// is finite and multiplied by zero); until has no derivative. On concrete
// primals (eager differentiation) the loop runs first, and the scan takes
// as many trips as it did instead of max (the loop is not differentiated
// as it runs, unrolled: that would give other bits than the compiled
// derivative, which knows no trip count and runs this scan). The scan's
// rules then give forward mode and linearization; the derivative covers the
// steps taken. The carry of the scan: the carry, the donor (the last carry
// stepped), the stop and the donor's stop. The scan replays the loop
// (ir::Replay): the adds to totals are the loop's own run's, the run that
// counts the trips on concrete primals, else the iterate bound for them.
std::vector<Tensor> jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  const IterateParts parts(eq, inputs.size());
  bool tangents = false;
  std::vector<Tensor> primals;
  for (const Tensor& t : inputs) {
    primals.push_back(trace.primal_of(t));
    tangents = tangents || trace.tangent_of(t).defined();
  }
  if (!tangents) return ir::bind_construct(eq, primals, "rune::iterate");
  const bool concrete = std::none_of(primals.begin(), primals.end(), [](const Tensor& t) { return t.is_traced(); });
  std::int64_t trips = parts.max;
  if (concrete) trips = run(eq, primals).second;
  else if (ir::holds_unreplayed(eq)) ir::bind_construct(eq, primals, "rune::iterate");
  ir::Replay derivative;
  const std::size_t n = parts.carries;
  std::vector<Tensor> carry(inputs.begin(), inputs.begin() + long(n));
  const Tensor stop = ir::evaluate(*eq.programs[0], parts.until_args(inputs, carry))[0];

  ir::StagingTrace staging("rune::iterate");
  std::shared_ptr<const ir::Program> trip;
  {
    nx::ops::TraceScope scope(staging);
    std::vector<Tensor> x, donor, captures;
    for (std::size_t k = 0; k < n; ++k) x.push_back(staging.add_param(nx::ops::type_of(carry[k])));
    for (std::size_t k = 0; k < n; ++k) donor.push_back(staging.add_param(nx::ops::type_of(carry[k])));
    const Tensor x_stop = staging.add_param(nx::ops::type_of(stop));
    const Tensor donor_stop = staging.add_param(nx::ops::type_of(stop));
    std::vector<Tensor> in = x;  // (a stand-in of the iterate's inputs: carry, then captures)
    for (std::size_t i = n; i < inputs.size(); ++i) in.push_back(staging.add_param(nx::ops::type_of(inputs[i])));
    const Tensor finished = nx::all(x_stop);
    std::vector<Tensor> stepped_at;
    for (std::size_t k = 0; k < n; ++k) stepped_at.push_back(nx::where(finished, donor[k], x[k]));
    const Tensor stepped_stop = nx::where(finished, donor_stop, x_stop);
    const std::vector<Tensor> y = ir::evaluate(*eq.programs[1], parts.step_args(in, stepped_at, stepped_stop));
    std::vector<Tensor> next_x, results;
    for (std::size_t k = 0; k < n; ++k) next_x.push_back(nx::where(finished, x[k], y[k]));
    results = next_x;
    for (std::size_t k = 0; k < n; ++k) results.push_back(stepped_at[k]);
    results.push_back(ir::evaluate(*eq.programs[0], parts.until_args(in, next_x))[0]);
    results.push_back(stepped_stop);
    trip = staging.finish(results);
  }
  std::vector<Tensor> scan_inputs = carry;
  scan_inputs.insert(scan_inputs.end(), carry.begin(), carry.end());
  scan_inputs.push_back(stop);
  scan_inputs.push_back(stop);
  scan_inputs.insert(scan_inputs.end(), inputs.begin() + long(n), inputs.end());
  scan_inputs.insert(scan_inputs.end(), staging.captures().begin(), staging.captures().end());
  ir::Equation scan;
  scan.kind = ir::OpKind::scan;
  scan.info = ir::ScanInfo{trips, int(2 * n + 2), 0};
  scan.programs = {trip};
  std::vector<Tensor> outs = ir::bind_construct(scan, scan_inputs, "rune::iterate");
  const std::int64_t max = parts.max;
  nx::check(outs[2 * n], std::tuple<>{}, [max](const nx::Index& lane, std::tuple<>) {
    return std::make_exception_ptr(std::invalid_argument("rune::iterate: " + still_running(max, lane)));
  });
  return std::vector<Tensor>(outs.begin(), outs.begin() + long(n));
}

// Until, then the step, in turn ("until 0", "step 0", "until 1", ...).
class IterateStepping final : public ir::Stepping {
 public:
  IterateStepping(const ir::Equation& eq, std::vector<Tensor> inputs)
      : eq_(eq), parts_(eq, inputs.size()), inputs_(std::move(inputs)),
        carry_(inputs_.begin(), inputs_.begin() + long(parts_.carries)) {}

  std::optional<ir::Trip> first() const override { return until_trip(carry_, 0); }
  std::optional<ir::Trip> after(std::span<const Tensor> results) const override {
    if (in_step_) return until_trip(results, trip_ + 1);
    if (all_stopped(results[0]) || trip_ == parts_.max) return std::nullopt;
    return ir::Trip{eq_.programs[1].get(), parts_.step_args(inputs_, carry_, results[0]), "step " + std::to_string(trip_)};
  }
  void advance(std::span<const Tensor> results) override {
    if (in_step_) {
      carry_.assign(results.begin(), results.end());
      ++trip_;
    }
    in_step_ = !in_step_;
  }
  std::vector<Tensor> outputs(std::span<const Tensor> last) const override {
    if (!all_stopped(last[0])) fail_still_running(eq_, last[0]);
    return carry_;
  }

 private:
  std::optional<ir::Trip> until_trip(std::span<const Tensor> carry, std::int64_t trip) const {
    return ir::Trip{eq_.programs[0].get(), parts_.until_args(inputs_, carry), "until " + std::to_string(trip)};
  }

  const ir::Equation& eq_;
  IterateParts parts_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> carry_;
  std::int64_t trip_ = 0;
  bool in_step_ = false;  // (the current run is until's)
};

std::unique_ptr<ir::Stepping> step(const ir::Equation& eq, std::vector<Tensor> inputs) {
  return std::make_unique<IterateStepping>(eq, std::move(inputs));
}

std::vector<int> group_sizes(const ir::Equation& eq, std::size_t inputs) {
  const IterateParts parts(eq, inputs);
  return {int(parts.carries), int(parts.until_captures), int(parts.step_captures)};
}

void from_text(ir::Equation& eq, std::int64_t count, std::span<const int> sizes) {
  eq.info = ir::IterateInfo{count, sizes[0], sizes[1]};
}

// Until's parameters are its inputs (carry, until's captures); the step's
// are the carry, the stop (until's result: no input), its captures.
int param_source(const ir::Equation& eq, std::size_t program, std::size_t param, bool* row) {
  *row = false;
  const auto& s = std::get<ir::IterateInfo>(eq.info);
  if (program == 0 || param < std::size_t(s.carry_count)) return int(param);
  if (param == std::size_t(s.carry_count)) return -1;
  return int(param) - 1 + s.until_captures;
}

}  // namespace

const ir::ConstructRules iterate_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::iterate";
  r.text = ir::TextForm{"iterate", "steps", {"init", "until_captures", "step_captures"}, {"until", "step"}};
  r.output_types = output_types;
  r.eager = eager;
  r.lowering = ir::Lowering::iterate;
  r.jvp = jvp;
  r.batch = iterate_batched;
  r.count = [](const ir::Equation& eq) { return std::get<ir::IterateInfo>(eq.info).max; };
  r.group_sizes = group_sizes;
  r.from_text = from_text;
  r.param_source = param_source;
  r.still_running = fail_still_running;
  r.step = step;
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

void iterate_max_negative(std::int64_t max) {
  nx::ops::fail("rune::iterate", "max = " + std::to_string(max) + " is negative");
}

void iterate_carry_differs(const std::string& difference) { nx::ops::fail("rune::iterate", difference); }

void check_until(const nx::Tensor& stop) {
  if (!stop.defined() || stop.dtype() != nx::bool_ || stop.ndim() != 0)
    nx::ops::fail("rune::iterate", "until must return one boolean, got " +
                                       (stop.defined() ? nx::ops::describe(stop) : std::string("no value")));
}

nx::Tensor until_result_like() { return nx::scalar(nx::bool_, 0.); }

std::vector<nx::Tensor> bind_iterate(std::shared_ptr<const ir::Program> until, std::shared_ptr<const ir::Program> step,
                                     std::int64_t max, int carry_count, int until_captures,
                                     std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::iterate;
  eq.info = ir::IterateInfo{max, carry_count, until_captures};
  eq.programs = {std::move(until), std::move(step)};
  return ir::bind_construct(eq, inputs, "rune::iterate");
}

}  // namespace rune::detail
