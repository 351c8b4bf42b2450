// nx::check: conditions computed with the program; the first false element
// throws the exception the check makes. It reads values, not derivatives,
// and has an effect (passes keep it).
#include "constructs/elements.hpp"

#include <algorithm>

#include "ad/jvp_trace.hpp"
#include "constructs/table.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/type_checks.hpp"
#include "rune/check.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

std::optional<nx::Index> first_false(const nx::Tensor& condition) {
  if (nx::item(nx::all(condition)) != 0.) return std::nullopt;  // (one reduction when all hold)
  const std::vector<bool> holds = nx::to_vector<bool>(condition);
  std::size_t k = std::size_t(std::find(holds.begin(), holds.end(), false) - holds.begin());
  nx::Index index(condition.shape().size());
  for (std::size_t d = index.size(); d-- > 0;) {
    index[d] = std::int64_t(k % std::size_t(condition.shape()[d]));
    k /= std::size_t(condition.shape()[d]);
  }
  return index;
}

namespace {

// The element at index, as a scalar tensor.
nx::Tensor element(const nx::Tensor& t, const nx::Index& index) {
  nx::Shape stop = index;
  for (auto& i : stop) ++i;
  return nx::reshape(nx::slice(t, index, stop), {});
}

// Throws the exception the check makes for the first false condition
// element; a data leaf shaped like that condition is given at the index.
std::vector<nx::Tensor> eager(const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  const auto conditions = std::size_t(eq.code<ir::CheckCall>()->condition_count);
  for (std::size_t c = 0; c < conditions; ++c) {
    const std::optional<nx::Index> index = first_false(inputs[c]);
    if (!index) continue;
    std::vector<nx::Tensor> data;
    for (const nx::Tensor& t : inputs.subspan(conditions))
      data.push_back(t.ndim() > 0 && t.shape() == inputs[c].shape() ? element(t, *index) : t);
    std::rethrow_exception(eq.code<ir::CheckCall>()->make(*index, data));
  }
  return {};
}

std::vector<nx::Tensor> jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs) {
  std::vector<nx::Tensor> primals;
  for (const nx::Tensor& t : inputs) primals.push_back(trace.primal_of(t));
  return ir::bind_construct(eq, primals, "nx::check");
}

struct Check final : ir::CheckCall {
  detail::MakeException make_exception;
  std::exception_ptr make(const nx::Index& index, std::span<const nx::Tensor> data) const override {
    return make_exception(index, data);
  }
};

}  // namespace

const ir::ConstructRules check_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "nx::check";
  r.effect = true;
  r.output_types = [](const ir::Equation&, std::span<const ir::TensorType>) { return std::vector<ir::TensorType>{}; };
  r.eager = eager;
  r.jvp = jvp;
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

void bind_check(std::vector<nx::Tensor> conditions, std::vector<nx::Tensor> data, MakeException make) {
  nx::ops::check_defined("nx::check", conditions);
  nx::ops::check_defined("nx::check", data);
  for (const nx::Tensor& c : conditions)
    if (c.dtype() != nx::bool_)
      nx::ops::fail("nx::check", "the condition must be a bool tensor, got " + nx::ops::describe(c));
  auto check = std::make_shared<constructs::Check>();
  check->make_exception = std::move(make);
  check->condition_count = int(conditions.size());
  ir::Equation eq;
  eq.kind = ir::OpKind::check;
  eq.info = check;
  std::vector<nx::Tensor> inputs = std::move(conditions);
  inputs.insert(inputs.end(), data.begin(), data.end());
  ir::bind_construct(eq, inputs, "nx::check");
}

}  // namespace rune::detail
