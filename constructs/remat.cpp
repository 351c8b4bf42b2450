// rune::remat: an equation computing its program. Forward mode
// differentiates the program in place. Linearization keeps only the
// inputs: the linear program records a linear call whose transpose is the
// program's linearization traced over (output cotangents, inputs) and
// transposed there, so the backward pass computes the program's values
// again from the inputs it kept.
#include "ad/jvp_trace.hpp"
#include "ad/split.hpp"
#include "ad/transpose.hpp"
#include "constructs/batched_program.hpp"
#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"
#include "rune/remat.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;

std::vector<ir::TensorType> output_types(const ir::Equation& eq, std::span<const ir::TensorType> in) {
  if (eq.programs.size() != 1)
    nx::ops::fail("rune::remat", "a remat has one program, not " + std::to_string(eq.programs.size()));
  const ir::Program& body = *eq.programs[0];
  std::vector<ir::TensorType> params;
  for (int v : body.params) params.push_back(body.types[std::size_t(v)]);
  if (!std::equal(params.begin(), params.end(), in.begin(), in.end()))
    nx::ops::fail("rune::remat", "the program's parameters do not have the types of the inputs");
  std::vector<ir::TensorType> out;
  for (int v : body.results) out.push_back(body.types[std::size_t(v)]);
  return out;
}

std::vector<Tensor> eager(const ir::Equation& eq, std::span<const Tensor> inputs) {
  return ir::evaluate(*eq.programs[0], inputs);
}

// The backward pass: a program from (cotangents of the outputs, inputs) to
// the cotangents of the inputs that have a tangent (`slots`): it computes
// the body's primal part again from the inputs (adding nothing to totals:
// a replay) and transposes the linear part.
std::pair<std::shared_ptr<const ir::Program>, std::vector<Tensor>> backward(const ir::Program& body,
                                                                           std::span<const Tensor> primals,
                                                                           const std::vector<bool>& slots,
                                                                           std::span<const Tensor> outputs) {
  std::vector<ir::TensorType> types;
  for (const Tensor& x : primals) types.push_back(nx::ops::type_of(x));
  const ad::Split parts = ad::split(body, types, slots);
  ir::StagingTrace staging("rune::grad");
  std::shared_ptr<const ir::Program> program;
  {
    nx::ops::TraceScope staged(staging);
    ir::Replay replay;
    std::vector<Tensor> cts, args;
    for (const Tensor& y : outputs) cts.push_back(staging.add_param(nx::ops::type_of(y)));
    for (const ir::TensorType& t : types) args.push_back(staging.add_param(t));
    args.insert(args.end(), parts.captures.begin(), parts.captures.end());
    const std::vector<Tensor> computed = ir::evaluate(*parts.primal, args);
    const auto tangents = std::size_t(std::count(slots.begin(), slots.end(), true));
    std::vector<Tensor> fixed(tangents);
    fixed.insert(fixed.end(), computed.end() - long(parts.residuals), computed.end());
    std::vector<Tensor> in_cts = ad::transpose(*parts.linear, fixed, cts);
    in_cts.resize(tangents);
    program = staging.finish(in_cts);
  }
  return {program, staging.captures()};
}

std::vector<Tensor> jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  if (!trace.linearizing()) return ir::evaluate(*eq.programs[0], inputs);  // (in place: forward mode)
  std::vector<Tensor> primals, tangents;
  std::vector<bool> slots;
  for (const Tensor& t : inputs) {
    primals.push_back(trace.primal_of(t));
    tangents.push_back(trace.tangent_of(t));
    slots.push_back(tangents.back().defined());
  }
  std::vector<Tensor> outputs = ir::bind_construct(eq, primals, "rune::remat");
  if (std::none_of(slots.begin(), slots.end(), [](bool s) { return s; })) return outputs;
  auto [transpose, captures] = backward(*eq.programs[0], primals, slots, outputs);
  auto call = std::make_shared<ir::LinearCall>();
  call->transpose = transpose;
  for (const Tensor& y : outputs) call->output_types.push_back(nx::ops::type_of(y));
  ir::Equation linear;
  linear.kind = ir::OpKind::linear_call;
  linear.info = call;
  std::vector<Tensor> linear_inputs;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (slots[i]) linear_inputs.push_back(tangents[i]);
  linear_inputs.insert(linear_inputs.end(), primals.begin(), primals.end());
  linear_inputs.insert(linear_inputs.end(), captures.begin(), captures.end());
  std::vector<Tensor> out_tangents = ir::bind_construct(linear, linear_inputs, "rune::grad");
  std::vector<Tensor> wrapped;
  for (std::size_t k = 0; k < outputs.size(); ++k)
    wrapped.push_back(nx::is_inexact(outputs[k].dtype()) ? trace.wrap(outputs[k], out_tangents[k]) : outputs[k]);
  return wrapped;
}

// Under vmap: one remat of the program over every lane.
std::vector<Tensor> batched(batch::BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  LaneInputs in = lane_inputs(trace, inputs);
  BatchedProgram body = batch_program(trace, *eq.programs[0], types_of(in.values), in.batched);
  ir::Equation remat = eq;
  remat.programs = {body.program};
  in.values.insert(in.values.end(), body.captures.begin(), body.captures.end());
  std::vector<Tensor> out = ir::bind_construct(remat, in.values, "rune::remat");
  for (std::size_t k = 0; k < out.size(); ++k)
    if (body.results_batched[k]) out[k] = trace.wrap(out[k]);
  return out;
}

// One run of the body ("call").
class RematStepping final : public ir::Stepping {
 public:
  RematStepping(const ir::Equation& eq, std::vector<Tensor> inputs) : eq_(eq), inputs_(std::move(inputs)) {}
  std::optional<ir::Trip> first() const override { return ir::Trip{eq_.programs[0].get(), inputs_, "call"}; }
  std::optional<ir::Trip> after(std::span<const Tensor>) const override { return std::nullopt; }
  void advance(std::span<const Tensor>) override {}
  std::vector<Tensor> outputs(std::span<const Tensor> last) const override {
    return std::vector<Tensor>(last.begin(), last.end());
  }

 private:
  const ir::Equation& eq_;
  std::vector<Tensor> inputs_;
};

}  // namespace

const ir::ConstructRules remat_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::remat";
  r.text = ir::TextForm{"remat", "", {"operands"}, {"body"}};
  r.output_types = output_types;
  r.eager = eager;
  r.lowering = ir::Lowering::body;
  r.jvp = jvp;
  r.batch = batched;
  r.group_sizes = [](const ir::Equation&, std::size_t inputs) { return std::vector<int>{int(inputs)}; };
  r.from_text = [](ir::Equation&, std::int64_t, std::span<const int>) {};
  r.param_source = [](const ir::Equation&, std::size_t, std::size_t param, bool* row) {
    *row = false;
    return int(param);
  };
  r.step = [](const ir::Equation& eq, std::vector<Tensor> inputs) -> std::unique_ptr<ir::Stepping> {
    return std::make_unique<RematStepping>(eq, std::move(inputs));
  };
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

std::vector<nx::Tensor> bind_remat(std::shared_ptr<const ir::Program> program, std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::remat;
  eq.programs = {std::move(program)};
  return ir::bind_construct(eq, inputs, "rune::remat");
}

}  // namespace rune::detail
