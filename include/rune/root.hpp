// rune::root: a value stated to be a zero of a function, differentiated by
// the implicit function theorem.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "rune/detail/autodiff.hpp"
#include "rune/detail/linear_solve.hpp"
#include "rune/detail/located.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
// Applies a root (see ir/program.hpp's RootInfo for its inputs).
std::vector<nx::Tensor> bind_root(std::shared_ptr<const ir::Program> residual,
                                  std::shared_ptr<const LinearSolve> linear_solve, int point_count,
                                  std::span<const nx::Tensor> inputs);

// solve() without derivatives, then a root equation of the residual at
// that point (ls: null, or the user's linear solve).
template <class Residual, class Solve, class LS>
auto solved_root(Residual& residual, Solve& solve, LS* ls, const CallSite& where) {
  using X = std::decay_t<decltype(solve())>;
  const X x = [&] {
    WithoutDerivatives paused;
    return solve();
  }();
  const std::vector<nx::Tensor> point = leaves(x);
  Staging staging("rune::root");
  std::vector<nx::Tensor> params = staging.parameters(point);
  auto program = staging.finish(result_leaves("rune::root", located("the residual of rune::root", where, [&] {
    return residual(rebuild(x, std::span<const nx::Tensor>(params)));
  })));
  std::shared_ptr<const LinearSolve> solver;
  if constexpr (!std::is_same_v<LS, std::nullptr_t>) {
    struct Solver final : LinearSolve {
      LS user;
      X like;
      Solver(LS u, X k) : user(std::move(u)), like(std::move(k)) {}
      std::vector<nx::Tensor> solve(const LinearOperator& op, std::span<const nx::Tensor> b) const override {
        auto apply = [&](const X& v) {
          std::vector<nx::Tensor> out = op(leaves(v));
          return rebuild(like, std::span<const nx::Tensor>(out));
        };
        return result_leaves("rune::root", user(apply, rebuild(like, b)));
      }
    };
    solver = std::make_shared<Solver>(*ls, x);
  }
  std::vector<nx::Tensor> inputs = point;
  inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
  const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
  std::vector<nx::Tensor> out = bind_root(program, solver, int(point.size()), inputs);
  return rebuild(x, std::span<const nx::Tensor>(out));
}
}  // namespace detail

// solve() gives a point stated to be a zero of residual (solve: () -> X,
// residual: X -> a structure of as many elements). The value is solve()'s;
// solve is never differentiated: the derivative comes from the implicit
// function theorem at the returned point, through the values the residual
// captures (the Jacobian built column by column and solved by nx::solve).
template <class Residual, class Solve>
auto root(Residual residual, Solve solve, detail::CallSite where = detail::CallSite::current()) {
  return detail::solved_root(residual, solve, static_cast<std::nullptr_t*>(nullptr), where);
}

// With a linear solve: ls(op, b) -> v with op(v) = b, where op applies the
// residual's Jacobian at the point (a function X -> X that works under any
// transformation); the derivative solves with it instead of nx::solve.
template <class Residual, class Solve, class LinearSolve>
auto root(Residual residual, Solve solve, LinearSolve ls, detail::CallSite where = detail::CallSite::current()) {
  return detail::solved_root(residual, solve, &ls, where);
}

}  // namespace rune
