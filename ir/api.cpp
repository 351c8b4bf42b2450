// The rune entry points over programs: staging for the templates, scan's
// checks and binding, and Program's text, files and evaluation.
#include <fstream>
#include <optional>
#include <sstream>

#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/text.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/type_checks.hpp"
#include "rune/callback.hpp"
#include "rune/check.hpp"
#include "rune/detail/custom_rule.hpp"
#include "rune/program.hpp"
#include "rune/scan.hpp"

namespace rune {

namespace detail {

struct Staging::State {
  ir::StagingTrace trace;
  std::optional<nx::ops::TraceScope> scope;
  explicit State(std::string_view entry) : trace(entry) { scope.emplace(trace); }
};

Staging::Staging(std::string_view entry_point) : state_(std::make_unique<State>(entry_point)) {}
Staging::~Staging() = default;

std::vector<nx::Tensor> Staging::parameters(std::span<const nx::Tensor> like) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : like) out.push_back(state_->trace.add_param(nx::ops::type_of(t)));
  return out;
}

std::vector<nx::Tensor> Staging::row_parameters(std::span<const nx::Tensor> like) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : like) {
    ir::TensorType row = nx::ops::type_of(t);
    row.shape.erase(row.shape.begin());
    out.push_back(state_->trace.add_param(row));
  }
  return out;
}

std::shared_ptr<const ir::Program> Staging::finish(std::span<const nx::Tensor> results) {
  auto program = state_->trace.finish(results);
  state_->scope.reset();
  return program;
}

const std::vector<nx::Tensor>& Staging::captures() const { return state_->trace.captures(); }

std::int64_t scan_length(const std::vector<nx::Tensor>& xs) {
  if (xs.empty()) nx::ops::fail("rune::scan", "xs has no leaf");
  for (const nx::Tensor& t : xs)
    if (t.ndim() == 0) nx::ops::fail("rune::scan", "an xs leaf is a scalar");
  for (const nx::Tensor& t : xs)
    if (t.shape()[0] != xs[0].shape()[0]) nx::ops::fail("rune::scan", "the xs leaves differ in their leading length");
  if (xs[0].shape()[0] == 0) nx::ops::fail("rune::scan", "xs is empty along the scan axis");
  return xs[0].shape()[0];
}

void scan_carry_differs(const std::string& difference) { nx::ops::fail("rune::scan", difference); }

std::vector<nx::Tensor> bind_scan(std::shared_ptr<const ir::Program> step, std::int64_t length, int carry_count,
                                  int xs_count, std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::scan;
  eq.scan = {length, carry_count, xs_count};
  eq.programs = {std::move(step)};
  return ir::bind_construct(eq, inputs, "rune::scan");
}

}  // namespace detail

const ir::Program& Program::ir() const {
  if (!impl_) throw std::invalid_argument("rune::Program: the program is empty (it was default-constructed)");
  return *impl_;
}

bool Program::operator==(const Program& other) const { return ir::equal(ir(), other.ir()); }

std::string to_string(const Program& program) { return ir::print(program.ir()); }

std::ostream& operator<<(std::ostream& os, const Program& program) { return os << to_string(program); }

Program parse_program(std::string_view text) { return Program(std::make_shared<ir::Program>(ir::parse(text))); }

Program load_program(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) nx::ops::fail("rune::load_program", "cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_program(text.str());
}

namespace {
// Whether a program (or a sub-program) runs C++ code that has no text.
bool holds_code(const ir::Program& p) {
  for (const ir::Equation& eq : p.equations) {
    if (eq.kind != ir::OpKind::primitive && eq.kind != ir::OpKind::constant && eq.kind != ir::OpKind::scan)
      return true;
    for (const auto& sub : eq.programs)
      if (holds_code(*sub)) return true;
  }
  return false;
}
}  // namespace

void save_program(const Program& program, const std::filesystem::path& file) {
  if (holds_code(program.ir()))
    nx::ops::fail("rune::save_program",
                  "the program holds C++ code (a rune::callback, an nx::check or a custom rule), which has no text");
  std::ofstream out(file);
  if (!out) nx::ops::fail("rune::save_program", "cannot write " + file.string());
  out << to_string(program);
  if (!out) nx::ops::fail("rune::save_program", "cannot write " + file.string());
}

std::vector<nx::Tensor> run(const Program& program, const std::vector<nx::Tensor>& args) {
  ir::check_arguments(program.ir(), args);
  return ir::evaluate(program.ir(), args);
}

}  // namespace rune

namespace rune::detail {

namespace {
struct Check final : ir::CheckCall {
  MakeException make_exception;
  std::exception_ptr make(const nx::Index& index, std::span<const nx::Tensor> data) const override {
    return make_exception(index, data);
  }
};
}  // namespace

void bind_check(std::vector<nx::Tensor> conditions, std::vector<nx::Tensor> data, MakeException make) {
  nx::ops::check_defined("nx::check", conditions);
  nx::ops::check_defined("nx::check", data);
  for (const nx::Tensor& c : conditions)
    if (c.dtype() != nx::bool_)
      nx::ops::fail("nx::check", "the condition must be a bool tensor, got " + nx::ops::describe(c));
  auto check = std::make_shared<Check>();
  check->make_exception = std::move(make);
  check->condition_count = int(conditions.size());
  ir::Equation eq;
  eq.kind = ir::OpKind::check;
  eq.check = check;
  std::vector<nx::Tensor> inputs = std::move(conditions);
  inputs.insert(inputs.end(), data.begin(), data.end());
  ir::bind_construct(eq, inputs, "nx::check");
}

namespace {
struct Host final : ir::HostCall {
  HostFunction function;
  std::vector<nx::Tensor> run(std::span<const nx::Tensor> args) const override {
    std::vector<nx::Tensor> out = function(args);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (nx::ops::type_of(out[i]) != output_types[i])
        nx::ops::fail("rune::callback", "result " + std::to_string(i) + " is " + nx::ops::describe(out[i]) +
                                            ", like says " + nx::ops::to_string(output_types[i]));
    return out;
  }
};
}  // namespace

std::vector<nx::Tensor> bind_callback(std::vector<nx::Tensor> args, std::span<const nx::Tensor> like,
                                      HostFunction function) {
  nx::ops::check_defined("rune::callback", args);
  nx::ops::check_defined("rune::callback", like);
  auto host = std::make_shared<Host>();
  host->function = std::move(function);
  for (const nx::Tensor& t : like) host->output_types.push_back(nx::ops::type_of(t));
  ir::Equation eq;
  eq.kind = ir::OpKind::callback;
  eq.host = host;
  return ir::bind_construct(eq, args, "rune::callback");
}

}  // namespace rune::detail

namespace rune::detail {

bool tracing(std::span<const nx::Tensor> values) {
  if (nx::ops::trace_depth() > 0) return true;
  for (const nx::Tensor& t : values)
    if (t.defined() && t.is_traced()) return true;
  return false;
}

std::vector<nx::Tensor> bind_custom(std::shared_ptr<const CustomRule> rule, std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::custom;
  eq.rule = std::move(rule);
  return ir::bind_construct(eq, inputs, ir::entry_point(eq));
}

void callback_result_differs(const std::string& difference) { nx::ops::fail("rune::callback", difference); }
}  // namespace rune::detail
