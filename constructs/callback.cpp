// rune::callback: C++ run on the elements of its inputs, once per
// execution (an effect); under vmap once per lane (the table's default). It
// has no derivative.
#include "ad/jvp_trace.hpp"
#include "constructs/table.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/type_checks.hpp"
#include "rune/callback.hpp"

namespace rune::constructs {

namespace {

std::vector<nx::Tensor> jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  std::vector<nx::Tensor> primals;
  bool tangents = false;
  for (const nx::Tensor& t : inputs) {
    primals.push_back(trace.primal_of(t));
    tangents = tangents || trace.tangent_of(t).defined();
  }
  if (tangents)
    nx::ops::fail(trace.entry_point(),
                  "rune::callback has no derivative; give the function a custom_jvp or custom_vjp rule");
  return ir::bind_construct(eq, primals, "rune::callback");
}

struct Host final : ir::HostCall {
  detail::HostFunction function;
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

const ir::ConstructRules callback_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::callback";
  r.effect = true;
  r.output_types = [](const ir::Equation& eq, std::span<const ir::TensorType>) { return eq.code<ir::HostCall>()->output_types; };
  r.eager = [](const ir::Equation& eq, std::span<const nx::Tensor> inputs) { return eq.code<ir::HostCall>()->run(inputs); };
  r.jvp = jvp;
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

std::vector<nx::Tensor> bind_callback(std::vector<nx::Tensor> args, std::span<const nx::Tensor> like,
                                      HostFunction function) {
  nx::ops::check_defined("rune::callback", args);
  nx::ops::check_defined("rune::callback", like);
  auto host = std::make_shared<constructs::Host>();
  host->function = std::move(function);
  for (const nx::Tensor& t : like) host->output_types.push_back(nx::ops::type_of(t));
  ir::Equation eq;
  eq.kind = ir::OpKind::callback;
  eq.info = host;
  return ir::bind_construct(eq, args, "rune::callback");
}

void callback_result_differs(const std::string& difference) { nx::ops::fail("rune::callback", difference); }

}  // namespace rune::detail
