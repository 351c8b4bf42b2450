// rune::iterate: its entry points below the template, its type, eager,
// derivative and stepping rules, its text, and its entry in the construct
// table (batching: iterate_batching.cpp).
#include "constructs/iterate.hpp"

#include "constructs/elements.hpp"
#include "constructs/table.hpp"
#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
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
}  // namespace

Ran run(const ir::Equation& eq, std::span<const Tensor> inputs,
        const std::function<void(std::span<const Tensor>, const Tensor&)>& before_step) {
  const IterateParts parts(eq, inputs.size());
  std::vector<Tensor> carry(inputs.begin(), inputs.begin() + long(parts.carries));
  for (std::int64_t trip = 0;; ++trip) {
    const Tensor stop = ir::evaluate(*eq.programs[0], parts.until_args(inputs, carry))[0];
    if (all_stopped(stop)) return {carry, trip};
    if (trip == parts.max) fail_still_running(eq, stop);
    if (before_step) before_step(carry, stop);
    carry = ir::evaluate(*eq.programs[1], parts.step_args(inputs, carry, stop));
  }
}

namespace {

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

std::vector<Tensor> eager(const ir::Equation& eq, std::span<const Tensor> inputs) { return run(eq, inputs).carry; }

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
  r.jvp = iterate_jvp;
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
