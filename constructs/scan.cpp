// rune::scan: its entry points below the template, its type, eager and
// stepping rules, its text, and its entry in the construct table.
#include "constructs/scan.hpp"

#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/sizes.hpp"
#include "rune/nx.hpp"
#include "rune/scan.hpp"

namespace rune::constructs {

namespace {

const ir::ScanInfo& info(const ir::Equation& eq) { return std::get<ir::ScanInfo>(eq.info); }

bool is_xs(const ir::ScanInfo& s, std::size_t i) {
  return int(i) >= s.carry_count && int(i) < s.carry_count + s.xs_count;
}

std::vector<ir::TensorType> output_types(const ir::Equation& eq, std::span<const ir::TensorType> in) {
  auto fail = [](const std::string& m) { nx::ops::fail("rune::scan", m); };
  if (eq.programs.size() != 1) fail("a scan has one step program, not " + std::to_string(eq.programs.size()));
  const ir::ScanInfo& s = info(eq);
  const ir::Program& step = *eq.programs[0];
  if (in.size() != step.params.size() || s.carry_count + s.xs_count > int(in.size()))
    fail("the step takes " + std::to_string(step.params.size()) + " values, the scan gives " +
         std::to_string(in.size()));
  for (std::size_t i = 0; i < in.size(); ++i) {
    ir::TensorType want = step.types[std::size_t(step.params[i])];
    ir::TensorType given = in[i];
    if (is_xs(s, i)) {
      if (given.shape.empty() || given.shape[0] != s.length)
        fail("xs value " + std::to_string(i - std::size_t(s.carry_count)) + " is " + nx::ops::to_string(given) +
             ", not " + std::to_string(s.length) + " rows");
      given.shape.erase(given.shape.begin());
    }
    if (want != given)
      fail("input " + std::to_string(i) + " is " + nx::ops::to_string(given) + ", the step takes " +
           nx::ops::to_string(want));
  }
  if (step.results.size() < std::size_t(s.carry_count))
    fail("the step returns " + std::to_string(step.results.size()) + (step.results.size() == 1 ? " value" : " values") +
         ", fewer than the " + std::to_string(s.carry_count) + " of the carry");
  std::vector<ir::TensorType> out;
  for (std::size_t r = 0; r < step.results.size(); ++r) {
    ir::TensorType t = step.types[std::size_t(step.results[r])];
    if (int(r) < s.carry_count) {
      if (t != in[r])
        fail("the step returns carry " + std::to_string(r) + " as " + nx::ops::to_string(t) + ", it receives " +
             nx::ops::to_string(in[r]));
    } else {
      t.shape.insert(t.shape.begin(), s.length);
      nx::ops::check_shape("rune::scan", t.shape);
    }
    out.push_back(t);
  }
  return out;
}

// The step's arguments for a row: the carry, that row of each xs, the
// captures.
std::vector<nx::Tensor> row_arguments(const ir::ScanInfo& s, std::span<const nx::Tensor> inputs,
                                      std::span<const nx::Tensor> carry, std::int64_t row) {
  std::vector<nx::Tensor> args(carry.begin(), carry.end());
  for (int k = 0; k < s.xs_count; ++k) args.push_back(nx::get(inputs[std::size_t(s.carry_count + k)], row));
  args.insert(args.end(), inputs.begin() + s.carry_count + s.xs_count, inputs.end());
  return args;
}

// The outputs from the final carry and each step result's rows.
std::vector<nx::Tensor> scan_outputs(const ir::Equation& eq, std::span<const nx::Tensor> carry,
                                     const std::vector<std::vector<nx::Tensor>>& ys) {
  const ir::ScanInfo& s = info(eq);
  const ir::Program& step = *eq.programs[0];
  std::vector<nx::Tensor> results(carry.begin(), carry.end());
  for (std::size_t k = 0; k < ys.size(); ++k) {
    if (s.length > 0) {
      results.push_back(nx::stack(ys[k]));
    } else {  // no rows: empty stacks of the step's output types
      ir::TensorType t = step.types[std::size_t(step.results[std::size_t(s.carry_count) + k])];
      t.shape.insert(t.shape.begin(), 0);
      results.push_back(nx::zeros(t.dtype, t.shape));
    }
  }
  return results;
}

// Runs the step once per row and stacks the outputs.
std::vector<nx::Tensor> eager(const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  const ir::ScanInfo& s = info(eq);
  const ir::Program& step = *eq.programs[0];
  std::vector<nx::Tensor> carry(inputs.begin(), inputs.begin() + s.carry_count);
  std::vector<std::vector<nx::Tensor>> ys(step.results.size() - std::size_t(s.carry_count));
  for (std::int64_t row = 0; row < s.length; ++row) {
    std::vector<nx::Tensor> out = ir::evaluate(step, row_arguments(s, inputs, carry, row));
    for (int k = 0; k < s.carry_count; ++k) carry[std::size_t(k)] = out[std::size_t(k)];
    for (std::size_t k = 0; k < ys.size(); ++k) ys[k].push_back(out[std::size_t(s.carry_count) + k]);
  }
  return scan_outputs(eq, carry, ys);
}

// Row by row: the carry and the step results collected so far.
class ScanStepping final : public ir::Stepping {
 public:
  ScanStepping(const ir::Equation& eq, std::vector<nx::Tensor> inputs)
      : eq_(eq), s_(info(eq)), inputs_(std::move(inputs)), carry_(inputs_.begin(), inputs_.begin() + s_.carry_count),
        ys_(eq.programs[0]->results.size() - std::size_t(s_.carry_count)) {}

  std::optional<ir::Trip> first() const override { return trip(carry_, 0); }
  std::optional<ir::Trip> after(std::span<const nx::Tensor> results) const override {
    return trip(results.first(std::size_t(s_.carry_count)), row_ + 1);
  }
  void advance(std::span<const nx::Tensor> results) override {
    carry_.assign(results.begin(), results.begin() + s_.carry_count);
    for (std::size_t k = 0; k < ys_.size(); ++k) ys_[k].push_back(results[std::size_t(s_.carry_count) + k]);
    ++row_;
  }
  std::vector<nx::Tensor> outputs(std::span<const nx::Tensor> last) const override {
    if (s_.length == 0) return scan_outputs(eq_, carry_, ys_);
    auto ys = ys_;
    for (std::size_t k = 0; k < ys.size(); ++k) ys[k].push_back(last[std::size_t(s_.carry_count) + k]);
    return scan_outputs(eq_, last.first(std::size_t(s_.carry_count)), ys);
  }

 private:
  std::optional<ir::Trip> trip(std::span<const nx::Tensor> carry, std::int64_t row) const {
    if (row >= s_.length) return std::nullopt;
    return ir::Trip{eq_.programs[0].get(), row_arguments(s_, inputs_, carry, row), "row " + std::to_string(row)};
  }

  const ir::Equation& eq_;
  const ir::ScanInfo& s_;
  std::vector<nx::Tensor> inputs_;
  std::vector<nx::Tensor> carry_;
  std::vector<std::vector<nx::Tensor>> ys_;
  std::int64_t row_ = 0;
};

std::unique_ptr<ir::Stepping> step(const ir::Equation& eq, std::vector<nx::Tensor> inputs) {
  return std::make_unique<ScanStepping>(eq, std::move(inputs));
}

std::vector<int> group_sizes(const ir::Equation& eq, std::size_t inputs) {
  const ir::ScanInfo& s = info(eq);
  return {s.carry_count, s.xs_count, int(inputs) - s.carry_count - s.xs_count};
}

void from_text(ir::Equation& eq, std::int64_t count, std::span<const int> sizes) {
  eq.info = ir::ScanInfo{count, sizes[0], sizes[1]};
}

int param_source(const ir::Equation& eq, std::size_t, std::size_t param, bool* row) {
  *row = is_xs(info(eq), param);
  return int(param);
}

}  // namespace

const ir::ConstructRules scan_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::scan";
  r.text = ir::TextForm{"scan", "rows", {"init", "xs", "captures"}, {"step"}};
  r.output_types = output_types;
  r.eager = eager;
  r.lowering = ir::Lowering::scan;
  r.jvp = scan_jvp;
  r.transpose = scan_transpose;
  r.batch = scan_batched;
  r.count = [](const ir::Equation& eq) { return info(eq).length; };
  r.group_sizes = group_sizes;
  r.from_text = from_text;
  r.param_source = param_source;
  r.step = step;
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

std::int64_t scan_length(const std::vector<nx::Tensor>& xs) {
  if (xs.empty()) nx::ops::fail("rune::scan", "xs has no leaf");
  for (const nx::Tensor& t : xs)
    if (t.ndim() == 0) nx::ops::fail("rune::scan", "an xs leaf is a scalar");
  for (const nx::Tensor& t : xs)
    if (t.shape()[0] != xs[0].shape()[0]) nx::ops::fail("rune::scan", "the xs leaves differ in their leading length");
  if (xs[0].shape()[0] == 0) nx::ops::fail("rune::scan", "xs is empty along the scan axis");
  return xs[0].shape()[0];
}

void check_scan_length(std::int64_t length) {
  if (length < 0) nx::ops::fail("rune::scan", "the length is negative (" + std::to_string(length) + ")");
}

void scan_carry_differs(const std::string& difference) { nx::ops::fail("rune::scan", difference); }

std::vector<nx::Tensor> bind_scan(std::shared_ptr<const ir::Program> step, std::int64_t length, int carry_count,
                                  int xs_count, std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::scan;
  eq.info = ir::ScanInfo{length, carry_count, xs_count};
  eq.programs = {std::move(step)};
  return ir::bind_construct(eq, inputs, "rune::scan");
}

}  // namespace rune::detail
