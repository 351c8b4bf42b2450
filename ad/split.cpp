#include "ad/split.hpp"

#include "ad/jvp_trace.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "rune/nx.hpp"

namespace rune::ad {

Split split(const ir::Program& program, std::span<const ir::TensorType> types, const std::vector<bool>& slots) {
  ir::StagingTrace staging("rune::grad");
  ir::StagingTrace linear("rune::grad", false);
  Split out;
  {
    nx::ops::TraceScope staged(staging);
    std::vector<nx::Tensor> params, primals, tangents;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    {
      nx::ops::TraceScope linear_scope(linear);
      JvpTrace jvp("rune::grad", &linear);
      nx::ops::TraceScope jvp_scope(jvp);
      std::vector<nx::Tensor> wrapped;
      for (std::size_t i = 0; i < params.size(); ++i)
        wrapped.push_back(slots[i] ? jvp.wrap(params[i], linear.add_param(types[i])) : params[i]);
      for (const nx::Tensor& r : ir::evaluate(program, wrapped)) {
        primals.push_back(jvp.primal_of(r));
        const nx::Tensor t = jvp.tangent_of(r);
        tangents.push_back(t.defined() ? t : nx::zeros_like(primals.back()));
      }
    }
    out.linear = linear.finish(tangents);
    out.residuals = linear.captures().size();
    primals.insert(primals.end(), linear.captures().begin(), linear.captures().end());
    out.primal = staging.finish(primals);
  }
  out.captures = staging.captures();
  return out;
}

Forward forward(const ir::Program& program, std::span<const ir::TensorType> types, const std::vector<bool>& slots) {
  ir::StagingTrace staging("rune::jvp");
  Forward out;
  {
    nx::ops::TraceScope staged(staging);
    std::vector<nx::Tensor> params, tangents, results;
    for (const ir::TensorType& t : types) params.push_back(staging.add_param(t));
    for (std::size_t i = 0; i < types.size(); ++i) tangents.push_back(slots[i] ? staging.add_param(types[i]) : nx::Tensor());
    std::vector<nx::Tensor> out_tangents;
    {
      JvpTrace jvp("rune::jvp");
      nx::ops::TraceScope jvp_scope(jvp);
      std::vector<nx::Tensor> wrapped;
      for (std::size_t i = 0; i < params.size(); ++i) wrapped.push_back(jvp.wrap(params[i], tangents[i]));
      for (const nx::Tensor& r : ir::evaluate(program, wrapped)) {
        results.push_back(jvp.primal_of(r));
        const nx::Tensor t = jvp.tangent_of(r);
        out_tangents.push_back(t.defined() ? t : nx::zeros_like(results.back()));
      }
    }
    results.insert(results.end(), out_tangents.begin(), out_tangents.end());
    out.program = staging.finish(results);
  }
  out.captures = staging.captures();
  return out;
}

}  // namespace rune::ad
