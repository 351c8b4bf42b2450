#include "tools/repl/stepper.hpp"

#include "ir/eval.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace rune::repl {

struct Stepper::Frame {
  const ir::Program* program = nullptr;
  std::vector<nx::Tensor> env;  // by value index; undefined until computed
  std::size_t next = 0;         // the next equation
  // A step's frame: the scan running it (null for the program's own frame)
  // and the loop's state.
  const ir::Equation* scan = nullptr;
  std::vector<nx::Tensor> inputs;  // the scan's: init, xs, captures
  std::int64_t row = 0;
  std::vector<nx::Tensor> carry;
  std::vector<std::vector<nx::Tensor>> ys;  // per y, one value per finished row

  // The current row's results: its carry, then its ys.
  std::vector<nx::Tensor> row_results() const;
};

namespace {

std::vector<nx::Tensor> gather(const std::vector<nx::Tensor>& env, const std::vector<int>& values) {
  std::vector<nx::Tensor> out;
  for (int v : values) out.push_back(env[std::size_t(v)]);
  return out;
}

// The step's arguments for the frame's current row: the carry, that row of
// each xs, the captures.
std::vector<nx::Tensor> row_arguments(const ir::ScanInfo& s, const std::vector<nx::Tensor>& inputs,
                                      const std::vector<nx::Tensor>& carry, std::int64_t row) {
  std::vector<nx::Tensor> args = carry;
  for (int k = 0; k < s.xs_count; ++k) args.push_back(nx::get(inputs[std::size_t(s.carry_count + k)], row));
  args.insert(args.end(), inputs.begin() + s.carry_count + s.xs_count, inputs.end());
  return args;
}

}  // namespace

std::vector<nx::Tensor> Stepper::Frame::row_results() const { return gather(env, program->results); }

Stepper::Stepper(std::shared_ptr<const ir::Program> program, std::vector<nx::Tensor> args)
    : program_(std::move(program)), names_(*program_), args_(std::move(args)) {
  ir::check_arguments(*program_, args_);
  Frame top;
  top.program = program_.get();
  top.env.resize(program_->types.size());
  frames_.push_back(std::move(top));
  for (std::size_t i = 0; i < args_.size(); ++i) frames_[0].env[std::size_t(program_->params[i])] = args_[i];
}

Stepper::~Stepper() = default;

std::string Stepper::row_text(std::size_t frame, std::int64_t row) const {
  int scan = names_.scan_of(*frames_[frame].program);
  return "row " + std::to_string(row) + " of " + (scan >= 0 ? name_text(scan) : std::string("a scan"));
}

std::string Stepper::where(std::size_t frame) const {
  std::string s;
  for (std::size_t i = frame; i > 0; --i) s += (s.empty() ? "" : ", ") + row_text(i, frames_[i].row);
  return s;
}

Stepper::Next Stepper::next() const {
  const std::size_t top = frames_.size() - 1;
  const Frame& f = frames_[top];
  auto first = [](const std::vector<int>& numbers) { return numbers.empty() ? -1 : numbers[0]; };
  if (f.next < f.program->equations.size()) {
    const ir::Equation& eq = f.program->equations[f.next];
    Next n{Kind::equation, names_.numbers(*f.program, eq.outputs), -1, where(top)};
    n.shown = first(n.defines);
    if (eq.kind == ir::OpKind::scan) {
      n.kind = Kind::start_scan;
      const ir::Program& step = *eq.programs[0];
      if (eq.scan.length > 0)  // (row 0's parameters)
        for (int number : names_.numbers(step, step.params)) n.defines.push_back(number);
    }
    return n;
  }
  if (!f.scan) return {};
  if (f.row + 1 < f.scan->scan.length) {
    std::vector<int> params = names_.numbers(*f.program, f.program->params);
    std::string rows = row_text(top, f.row + 1), outer = where(top - 1);
    return {Kind::next_row, params, first(params), outer.empty() ? rows : rows + ", " + outer};
  }
  return {Kind::end_scan, {}, first(names_.numbers(*frames_[top - 1].program, f.scan->outputs)), where(top - 1)};
}

std::vector<Produced> Stepper::step() {
  switch (next().kind) {
    case Kind::equation: return evaluate();
    case Kind::start_scan: return start_scan();
    case Kind::next_row: return next_row();
    case Kind::end_scan: return end_scan();
    case Kind::done: break;
  }
  throw std::invalid_argument("the program has finished");
}

std::vector<Produced> Stepper::define(std::size_t frame, const std::vector<int>& values,
                                      const std::vector<nx::Tensor>& tensors) {
  Frame& f = frames_[frame];
  std::vector<Produced> out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    f.env[std::size_t(values[k])] = tensors[k];
    out.push_back({names_.number(*f.program, values[k]), tensors[k], where(frame)});
  }
  return out;
}

std::vector<Produced> Stepper::evaluate() {
  Frame& f = frames_.back();
  const ir::Equation& eq = f.program->equations[f.next];
  nx::Tensor out = eq.kind == ir::OpKind::constant ? eq.constant
                                                   : nx::ops::bind(eq.prim, gather(f.env, eq.inputs), eq.params);
  ++f.next;
  return define(frames_.size() - 1, eq.outputs, {out});
}

std::vector<Produced> Stepper::start_scan() {
  Frame& f = frames_.back();
  const ir::Equation& eq = f.program->equations[f.next];
  std::vector<nx::Tensor> inputs = gather(f.env, eq.inputs);
  if (eq.scan.length == 0) {  // nothing to step through
    std::vector<nx::Tensor> out = ir::eager_construct(eq, inputs);
    ++f.next;
    return define(frames_.size() - 1, eq.outputs, out);
  }
  Frame s;
  s.program = eq.programs[0].get();
  s.env.resize(s.program->types.size());
  s.scan = &eq;
  s.carry.assign(inputs.begin(), inputs.begin() + eq.scan.carry_count);
  s.ys.resize(s.program->results.size() - std::size_t(eq.scan.carry_count));
  std::vector<nx::Tensor> args = row_arguments(eq.scan, inputs, s.carry, 0);
  s.inputs = std::move(inputs);
  frames_.push_back(std::move(s));
  return define(frames_.size() - 1, frames_.back().program->params, args);
}

// (What can fail is computed before the frame changes, so that a failure
// leaves the run as it was.)
std::vector<Produced> Stepper::next_row() {
  Frame& f = frames_.back();
  const ir::ScanInfo& s = f.scan->scan;
  std::vector<nx::Tensor> results = f.row_results();
  std::vector<nx::Tensor> carry(results.begin(), results.begin() + s.carry_count);
  std::vector<nx::Tensor> args = row_arguments(s, f.inputs, carry, f.row + 1);
  f.carry = std::move(carry);
  for (std::size_t k = 0; k < f.ys.size(); ++k) f.ys[k].push_back(results[std::size_t(s.carry_count) + k]);
  ++f.row;
  f.next = 0;
  f.env.assign(f.env.size(), nx::Tensor());  // a row's values live for that row
  return define(frames_.size() - 1, f.program->params, args);
}

std::vector<Produced> Stepper::end_scan() {
  const Frame& f = frames_.back();
  const ir::Equation& eq = *f.scan;
  std::vector<nx::Tensor> results = f.row_results();
  std::vector<nx::Tensor> out(results.begin(), results.begin() + eq.scan.carry_count);
  for (std::size_t k = 0; k < f.ys.size(); ++k) {
    std::vector<nx::Tensor> rows = f.ys[k];
    rows.push_back(results[std::size_t(eq.scan.carry_count) + k]);
    out.push_back(nx::stack(rows));
  }
  frames_.pop_back();
  ++frames_.back().next;
  return define(frames_.size() - 1, eq.outputs, out);
}

std::vector<Produced> Stepper::results() const {
  std::vector<Produced> out;
  for (int v : program_->results) out.push_back({names_.number(*program_, v), frames_[0].env[std::size_t(v)], ""});
  return out;
}

std::optional<std::size_t> Stepper::frame_of(int number) const {
  std::optional<Names::Place> place = names_.find(number);
  if (!place) return std::nullopt;
  for (std::size_t i = 0; i < frames_.size(); ++i)
    if (frames_[i].program == place->program) return i;
  return std::nullopt;
}

bool Stepper::running(int number) const { return frame_of(number).has_value(); }

std::optional<Produced> Stepper::value(int number) const {
  std::optional<std::size_t> frame = frame_of(number);
  if (!frame) return std::nullopt;
  const nx::Tensor& t = frames_[*frame].env[std::size_t(names_.find(number)->value)];
  if (!t.defined()) return std::nullopt;
  return Produced{number, t, where(*frame)};
}

}  // namespace rune::repl
