// rune::remat: a function whose backward pass computes it again from its
// arguments instead of keeping what it computed (rematerialization, JAX's
// checkpoint).
#pragma once

#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "rune/detail/located.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
// Applies a remat equation of `program` (see ir/program.hpp).
std::vector<nx::Tensor> bind_remat(std::shared_ptr<const ir::Program> program, std::span<const nx::Tensor> inputs);
}  // namespace detail

template <class F> class Rematerialized {
 public:
  Rematerialized(F f, detail::CallSite where) : f_(std::move(f)), where_(where) {}

  // f's value. Traced (under grad, jit, vmap), f's C++ runs once, into a
  // program; a derivative keeps only the arguments, and its backward pass
  // runs that program again (not the C++).
  template <class... Args> auto operator()(const Args&... args) const {
    const std::tuple<Args...> all{args...};
    const std::vector<nx::Tensor> in = leaves(all);
    if (!detail::tracing(in)) return f_(args...);  // eager: no backward pass to serve
    detail::Staging staging("rune::remat");
    std::vector<nx::Tensor> params = staging.parameters(in);
    auto result = detail::located("the function of rune::remat", where_,
                                  [&] { return std::apply(f_, rebuild(all, std::span<const nx::Tensor>(params))); });
    auto program = staging.finish(result_leaves("rune::remat", result));
    std::vector<nx::Tensor> inputs = in;
    inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
    const nx::detail::Placing here(where_);  // (the construct's equation is placed at its call)
    std::vector<nx::Tensor> out = detail::bind_remat(program, inputs);
    return rebuild(result, std::span<const nx::Tensor>(out));
  }

 private:
  F f_;
  detail::CallSite where_;  // where remat was called, for errors traced in f
};

// f with the same values and derivatives, whose backward pass recomputes
// from the saved arguments instead of keeping f's intermediate values.
template <class F> Rematerialized<F> remat(F f, detail::CallSite where = detail::CallSite::current()) {
  return Rematerialized<F>(std::move(f), where);
}

}  // namespace rune
