// Linearization and forward mode for the templates of rune/grad.hpp.
#include <cstdio>
#include <optional>

#include "ad/jvp_trace.hpp"
#include "ad/transpose.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "ops/errors.hpp"
#include "rune/detail/autodiff.hpp"
#include "rune/grad.hpp"

namespace rune {

namespace detail {

bool differentiable(const nx::Tensor& t) { return nx::is_inexact(t.dtype()); }

struct LinearMap {
  std::shared_ptr<const ir::Program> program;  // params: input tangents, then residuals
  std::size_t input_count = 0;
  std::vector<nx::Tensor> residuals;
  std::vector<bool> input_differentiable;
  std::vector<ir::TensorType> input_types;
};

std::vector<nx::Tensor> pull_back(const LinearMap& map, std::span<const nx::Tensor> output_cotangents,
                                  std::string_view) {
  std::vector<nx::Tensor> params(map.input_count);  // linear, then the residuals
  params.insert(params.end(), map.residuals.begin(), map.residuals.end());
  std::vector<nx::Tensor> tangent_cts = ad::transpose(*map.program, params, output_cotangents);
  std::vector<nx::Tensor> out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < map.input_types.size(); ++i)
    out.push_back(map.input_differentiable[i] ? tangent_cts[k++] : nx::ops::zeros_of(map.input_types[i]));
  return out;
}

// The linear trace records tangent operations only (it does not stage);
// the JVP trace above it carries (primal, tangent) pairs.
struct Linearization::State {
  ir::StagingTrace linear;
  ad::JvpTrace jvp;
  std::optional<nx::ops::TraceScope> linear_scope, jvp_scope;
  std::shared_ptr<LinearMap> map = std::make_shared<LinearMap>();
  explicit State(std::string_view entry) : linear(entry, false), jvp(entry, &linear) {
    linear_scope.emplace(linear);
    jvp_scope.emplace(jvp);
  }
};

Linearization::Linearization(std::string_view entry_point) : state_(std::make_unique<State>(entry_point)) {}
Linearization::~Linearization() = default;

std::vector<nx::Tensor> Linearization::inputs(std::span<const nx::Tensor> primals) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& x : primals) {
    const bool d = differentiable(x);
    state_->map->input_differentiable.push_back(d);
    state_->map->input_types.push_back(nx::ops::type_of(x));
    if (!d) {
      out.push_back(x);
      continue;
    }
    ++state_->map->input_count;
    out.push_back(state_->jvp.wrap(x, state_->linear.add_param(nx::ops::type_of(x))));
  }
  return out;
}

std::vector<nx::Tensor> Linearization::finish(std::span<const nx::Tensor> outputs, std::size_t linear_count) {
  std::vector<nx::Tensor> primals, tangents;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    primals.push_back(state_->jvp.primal_of(outputs[i]));
    if (i < linear_count) {
      nx::Tensor t = state_->jvp.tangent_of(outputs[i]);
      // A zero tangent (the output does not depend on the inputs) becomes
      // zeros recorded as a constant of the linear program.
      tangents.push_back(t.defined() ? t : nx::zeros_like(primals.back()));
    }
  }
  state_->jvp_scope.reset();
  state_->map->program = state_->linear.finish(tangents);
  state_->map->residuals = state_->linear.captures();
  state_->linear_scope.reset();
  return primals;
}

std::shared_ptr<const LinearMap> Linearization::linear_map() const { return state_->map; }

namespace {
std::size_t bytes_of(const nx::Tensor& t) { return std::size_t(t.numel()) * nx::size_of(t.dtype()); }

// The constants of a program and its sub-programs (the residuals a linear
// program recorded from concrete values).
std::size_t constant_bytes(const ir::Program& p) {
  std::size_t bytes = 0;
  for (const ir::Equation& eq : p.equations) {
    if (eq.kind == ir::OpKind::constant) bytes += bytes_of(eq.constant);
    for (const auto& sub : eq.programs) bytes += constant_bytes(*sub);
  }
  return bytes;
}
}  // namespace

std::size_t residual_bytes(const LinearMap& map) {
  std::size_t bytes = constant_bytes(*map.program);
  for (const nx::Tensor& t : map.residuals) bytes += bytes_of(t);
  return bytes;
}

struct Forward::State {
  ad::JvpTrace jvp;
  std::optional<nx::ops::TraceScope> scope;
  explicit State(std::string_view entry) : jvp(entry) { scope.emplace(jvp); }
};

Forward::Forward(std::string_view entry_point) : state_(std::make_unique<State>(entry_point)) {}
Forward::~Forward() = default;

std::vector<nx::Tensor> Forward::inputs(std::span<const nx::Tensor> primals, std::span<const nx::Tensor> tangents) {
  std::vector<nx::Tensor> out;
  for (std::size_t i = 0; i < primals.size(); ++i)
    out.push_back(differentiable(primals[i]) ? state_->jvp.wrap(primals[i], tangents[i]) : primals[i]);
  return out;
}

std::pair<std::vector<nx::Tensor>, std::vector<nx::Tensor>> Forward::finish(std::span<const nx::Tensor> outputs) {
  std::vector<nx::Tensor> primals, tangents;
  for (const nx::Tensor& y : outputs) {
    primals.push_back(state_->jvp.primal_of(y));
    nx::Tensor t = state_->jvp.tangent_of(y);
    tangents.push_back(t.defined() ? t : nx::zeros_like(primals.back()));
  }
  state_->scope.reset();
  return {primals, tangents};
}

void check_objective(const nx::Tensor& y, std::string_view entry_point) {
  if (!y.defined() || y.ndim() != 0 || !nx::is_inexact(y.dtype()))
    nx::ops::fail(entry_point, "the objective must return a real or complex scalar, got " +
                                   (y.defined() ? nx::ops::describe(y) : std::string("no value")));
}

void check_parameters(std::span<const nx::Tensor> leaves, std::string_view entry_point) {
  for (const nx::Tensor& t : leaves)
    if (differentiable(t)) return;
  nx::ops::fail(entry_point, "the parameters hold no real or complex tensor");
}

[[noreturn]] void structures_differ(std::string_view entry_point, const std::string& difference) {
  nx::ops::fail(entry_point, difference);
}

nx::Tensor fresh(const nx::Tensor& t) { return t.is_traced() ? t : nx::ops::contiguous(t); }

}  // namespace detail

nx::Tensor detach(nx::Operand x) {
  const nx::detail::Calling here(x.site());
  return nx::ops::bind(nx::ops::Prim::stop_gradient, {x});
}

}  // namespace rune

namespace rune::detail {
std::string grad_check_message(int direction, double numeric, double analytic) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "rune::check_grads: along direction %d, central differences give %.17g but the gradient gives %.17g",
                direction, numeric, analytic);
  return buf;
}
}  // namespace rune::detail
