// rune::cond and rune::switch_: their entry points below the templates; the
// cond construct's type, eager and stepping rules, its text and its entry in
// the construct table; and the union of the branches' captures
// (derivatives: cond_derivatives.cpp, batching: cond_batching.cpp).
#include "constructs/cond.hpp"

#include <algorithm>
#include <unordered_map>

#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ir/passes/canonical.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace rune::constructs {

using nx::Tensor;

UnitedBranches unite(const Branches& branches, std::size_t shared) {
  UnitedBranches out;
  std::unordered_map<const nx::detail::TensorImpl*, std::size_t> position;
  for (const std::vector<Tensor>& captures : branches.captures)
    for (const Tensor& t : captures)
      if (position.emplace(t.impl(), out.captures.size()).second) out.captures.push_back(t);
  for (std::size_t b = 0; b < branches.programs.size(); ++b) {
    ir::Program program = *branches.programs[b];
    std::vector<int> params(program.params.begin(), program.params.begin() + long(shared));
    std::vector<int> read(out.captures.size(), -1);  // the parameter of each capture the branch reads
    for (std::size_t j = 0; j < branches.captures[b].size(); ++j)
      read[position.at(branches.captures[b][j].impl())] = program.params[shared + j];
    for (std::size_t k = 0; k < read.size(); ++k)
      params.push_back(read[k] >= 0 ? read[k] : program.add_value(nx::ops::type_of(out.captures[k])));
    if (params == program.params) {
      out.programs.push_back(branches.programs[b]);
    } else {  // (added parameters come last in the numbering: renumber)
      program.params = std::move(params);
      out.programs.push_back(std::make_shared<const ir::Program>(ir::canonical(program)));
    }
  }
  return out;
}

std::vector<Tensor> bind_united(const UnitedBranches& branches, const Tensor& index, std::span<const Tensor> operands,
                                std::string_view api) {
  ir::Equation eq;
  eq.kind = ir::OpKind::cond;
  eq.programs = branches.programs;
  std::vector<Tensor> inputs{index};
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  inputs.insert(inputs.end(), branches.captures.begin(), branches.captures.end());
  return ir::bind_construct(eq, inputs, api);
}

namespace {

std::vector<ir::TensorType> result_types(const ir::Program& p) {
  std::vector<ir::TensorType> out;
  for (int v : p.results) out.push_back(p.types[std::size_t(v)]);
  return out;
}

std::vector<ir::TensorType> output_types(const ir::Equation& eq, std::span<const ir::TensorType> in) {
  auto fail = [](const std::string& m) { nx::ops::fail("rune::cond", m); };
  if (eq.programs.empty()) fail("a cond has at least one branch");
  if (in.empty() || in[0].dtype != nx::int32 || !in[0].shape.empty())
    fail("the index is " + (in.empty() ? std::string("missing") : nx::ops::to_string(in[0])) + ", not one int32");
  const std::vector<ir::TensorType> results = result_types(*eq.programs[0]);
  for (std::size_t b = 0; b < eq.programs.size(); ++b) {
    const ir::Program& branch = *eq.programs[b];
    const std::string name = "branch " + std::to_string(b);
    if (branch.params.size() != in.size() - 1)
      fail(name + " takes " + std::to_string(branch.params.size()) + " values, the cond gives " +
           std::to_string(in.size() - 1));
    for (std::size_t k = 0; k < branch.params.size(); ++k)
      if (branch.types[std::size_t(branch.params[k])] != in[k + 1])
        fail(name + " takes " + nx::ops::to_string(branch.types[std::size_t(branch.params[k])]) + " as value " +
             std::to_string(k) + ", the cond gives " + nx::ops::to_string(in[k + 1]));
    if (result_types(branch) != results) fail(name + " returns other types than branch 0");
  }
  return results;
}

// The branch computed: the index clamped into the branches.
std::size_t chosen(const ir::Equation& eq, const Tensor& index) {
  return std::size_t(std::clamp(nx::item(index), 0., double(eq.programs.size() - 1)));
}

std::vector<Tensor> eager(const ir::Equation& eq, std::span<const Tensor> inputs) {
  return ir::evaluate(*eq.programs[chosen(eq, inputs[0])], inputs.subspan(1));
}

// One trip: the branch chosen ("branch 1").
class CondStepping final : public ir::Stepping {
 public:
  CondStepping(const ir::Equation& eq, std::vector<Tensor> inputs)
      : branch_(chosen(eq, inputs[0])), program_(eq.programs[branch_].get()),
        operands_(inputs.begin() + 1, inputs.end()) {}

  std::optional<ir::Trip> first() const override {
    return ir::Trip{program_, operands_, "branch " + std::to_string(branch_)};
  }
  std::optional<ir::Trip> after(std::span<const Tensor>) const override { return std::nullopt; }
  void advance(std::span<const Tensor>) override {}
  std::vector<Tensor> outputs(std::span<const Tensor> last) const override { return {last.begin(), last.end()}; }

 private:
  std::size_t branch_;
  const ir::Program* program_;
  std::vector<Tensor> operands_;
};

std::unique_ptr<ir::Stepping> step(const ir::Equation& eq, std::vector<Tensor> inputs) {
  return std::make_unique<CondStepping>(eq, std::move(inputs));
}

void from_text(ir::Equation&, std::int64_t, std::span<const int> sizes) {
  if (sizes[0] != 1) nx::ops::fail("rune::cond", "the index is one value, not " + std::to_string(sizes[0]));
}

}  // namespace

const ir::ConstructRules cond_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::cond";
  r.text = ir::TextForm{"cond", "", {"index", "operands"}, {"branch"}, true};
  r.output_types = output_types;
  r.eager = eager;
  r.lowering = ir::Lowering::cond;
  r.jvp = cond_jvp;
  r.transpose = cond_transpose;
  r.batch = cond_batched;
  r.group_sizes = [](const ir::Equation&, std::size_t inputs) { return std::vector<int>{1, int(inputs) - 1}; };
  r.from_text = from_text;
  r.param_source = [](const ir::Equation&, std::size_t, std::size_t param, bool* row) {
    *row = false;
    return int(param) + 1;  // (after the index)
  };
  r.step = step;
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

nx::Tensor cond_index(const nx::Tensor& pred) {
  if (!pred.defined() || pred.dtype() != nx::bool_ || pred.ndim() != 0)
    nx::ops::fail("rune::cond", "pred must be one boolean, got " +
                                    (pred.defined() ? nx::ops::describe(pred) : std::string("no value")));
  return nx::cast(pred, nx::int32);
}

nx::Tensor switch_index(const nx::Tensor& index, std::size_t branches) {
  if (branches == 0) nx::ops::fail("rune::switch_", "there are no branches");
  if (!index.defined() || !nx::is_integer(index.dtype()) || index.ndim() != 0)
    nx::ops::fail("rune::switch_", "index must be one integer, got " +
                                       (index.defined() ? nx::ops::describe(index) : std::string("no value")));
  if (index.dtype() == nx::int32) return index;
  // Clamped before the cast, which would wrap an index beyond int32.
  return nx::cast(nx::clamp(index, 0., double(branches - 1)), nx::int32);
}

void branch_results_differ(std::string_view api, const std::string& difference) { nx::ops::fail(api, difference); }

std::vector<nx::Tensor> bind_cond(std::string_view api, const nx::Tensor& index, const TracedBranches& branches) {
  return constructs::bind_united(constructs::unite(branches, 0), index, {}, api);
}

}  // namespace rune::detail
