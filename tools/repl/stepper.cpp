#include "tools/repl/stepper.hpp"

#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace rune::repl {

struct Stepper::Frame {
  const ir::Program* program = nullptr;  // the program running in this frame
  std::vector<nx::Tensor> env;           // by value index; undefined until computed
  std::size_t next = 0;                  // the next equation
  // A sub-program's frame: the construct running it (null for the program's
  // own frame), its state, and this run's label ("row 2").
  const ir::Equation* construct = nullptr;
  std::shared_ptr<ir::Stepping> stepping;
  std::string label;

  // The current run's results.
  std::vector<nx::Tensor> run_results() const;
};

namespace {

std::vector<nx::Tensor> gather(const std::vector<nx::Tensor>& env, const std::vector<int>& values) {
  std::vector<nx::Tensor> out;
  for (int v : values) out.push_back(env[std::size_t(v)]);
  return out;
}

// Whether the equation is a construct the stepper enters.
bool stepped_through(const ir::Equation& eq) {
  return ir::is_construct(eq.kind) && ir::construct_rules(eq.kind).step != nullptr;
}

std::string_view word_of(const ir::Equation& eq) { return ir::construct_rules(eq.kind).text->word; }

}  // namespace

std::vector<nx::Tensor> Stepper::Frame::run_results() const { return gather(env, program->results); }

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

// "row 2 of %9": a run of the construct of frame `frame`.
std::string Stepper::run_text(std::size_t frame, const std::string& label) const {
  const ir::Equation& eq = *frames_[frame].construct;
  const ir::Program& outer = *frames_[frame - 1].program;
  return label + " of " +
         (eq.outputs.empty() ? "a " + std::string(word_of(eq)) : name_text(names_.number(outer, eq.outputs[0])));
}

std::string Stepper::where(std::size_t frame) const {
  std::string s;
  for (std::size_t i = frame; i > 0; --i) s += (s.empty() ? "" : ", ") + run_text(i, frames_[i].label);
  return s;
}

Stepper::Next Stepper::next() const {
  const std::size_t top = frames_.size() - 1;
  const Frame& f = frames_[top];
  // The values of `values` (of `program`), defined in the run `run`.
  auto defined = [&](const ir::Program& program, const std::vector<int>& values, const std::string& run) {
    std::vector<Defined> out;
    for (int number : names_.numbers(program, values)) out.push_back({number, run});
    return out;
  };
  auto first = [](const std::vector<Defined>& values) { return values.empty() ? -1 : values[0].number; };
  if (f.next < f.program->equations.size()) {
    const ir::Equation& eq = f.program->equations[f.next];
    Next n{Kind::equation, defined(*f.program, eq.outputs, f.label), -1, where(top), {}};
    n.shown = first(n.defines);
    if (stepped_through(eq)) {
      n.kind = Kind::enter;
      n.construct = word_of(eq);
      const auto stepping = ir::construct_rules(eq.kind).step(eq, gather(f.env, eq.inputs));
      if (auto trip = stepping->first())  // (the first run's parameters)
        for (Defined& d : defined(*trip->program, trip->program->params, trip->label)) n.defines.push_back(d);
    }
    return n;
  }
  if (!f.construct) return {};
  if (auto trip = f.stepping->after(f.run_results())) {
    std::vector<Defined> params = defined(*trip->program, trip->program->params, trip->label);
    std::string run = run_text(top, trip->label), outer = where(top - 1);
    return {Kind::next_run, params, first(params), outer.empty() ? run : run + ", " + outer, {}};
  }
  const ir::Program& outer = *frames_[top - 1].program;
  const std::vector<int> outputs = names_.numbers(outer, f.construct->outputs);
  return {Kind::leave, {}, outputs.empty() ? -1 : outputs[0], where(top - 1), word_of(*f.construct)};
}

std::vector<Produced> Stepper::step() {
  switch (next().kind) {
    case Kind::equation: return evaluate();
    case Kind::enter: return enter();
    case Kind::next_run: return next_run();
    case Kind::leave: return leave();
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
  std::vector<nx::Tensor> in = gather(f.env, eq.inputs);
  std::vector<nx::Tensor> out;
  switch (eq.kind) {
    case ir::OpKind::constant: out = {eq.constant}; break;
    case ir::OpKind::primitive: out = {nx::ops::bind(eq.prim, in, eq.params)}; break;
    default: out = ir::eager_construct(eq, in);
  }
  ++f.next;
  return define(frames_.size() - 1, eq.outputs, out);
}

std::vector<Produced> Stepper::enter() {
  Frame& f = frames_.back();
  const ir::Equation& eq = f.program->equations[f.next];
  std::shared_ptr<ir::Stepping> stepping = ir::construct_rules(eq.kind).step(eq, gather(f.env, eq.inputs));
  std::optional<ir::Trip> trip = stepping->first();
  if (!trip) {  // nothing to step through
    std::vector<nx::Tensor> out = stepping->outputs({});
    ++f.next;
    return define(frames_.size() - 1, eq.outputs, out);
  }
  Frame s;
  s.program = trip->program;
  s.env.resize(s.program->types.size());
  s.construct = &eq;
  s.stepping = std::move(stepping);
  s.label = trip->label;
  frames_.push_back(std::move(s));
  return define(frames_.size() - 1, trip->program->params, trip->args);
}

// (What can fail is computed before the frame changes, so that a failure
// leaves the run as it was.)
std::vector<Produced> Stepper::next_run() {
  Frame& f = frames_.back();
  std::vector<nx::Tensor> results = f.run_results();
  ir::Trip trip = *f.stepping->after(results);
  f.stepping->advance(results);
  f.program = trip.program;
  f.label = trip.label;
  f.next = 0;
  f.env.assign(f.program->types.size(), nx::Tensor());  // a run's values live for that run
  return define(frames_.size() - 1, f.program->params, trip.args);
}

std::vector<Produced> Stepper::leave() {
  const Frame& f = frames_.back();
  const ir::Equation& eq = *f.construct;
  std::vector<nx::Tensor> out = f.stepping->outputs(f.run_results());
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
