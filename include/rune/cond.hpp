// rune::cond and rune::switch_: one of several functions computed, chosen by
// a value known only when the code runs. Every branch is traced once into a
// program; only the chosen one is computed (under vmap with a choice that
// differs per lane, every branch is, and each lane selects its own).
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rune/detail/diagnose.hpp"
#include "rune/detail/located.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {

// Branches traced apart: each program takes the parameters that every
// branch takes (none for the user's functions), then captures of its own.
struct TracedBranches {
  std::vector<std::shared_ptr<const ir::Program>> programs;
  std::vector<std::vector<nx::Tensor>> captures;

  void add(std::shared_ptr<const ir::Program> program, std::vector<nx::Tensor> its_captures) {
    programs.push_back(std::move(program));
    captures.push_back(std::move(its_captures));
  }
  // Traces f() as the next branch and gives its result; its user errors
  // are located at `where`, the construct's call.
  template <class F> auto trace(std::string_view api, F& f, const CallSite& where) {
    Staging staging(api);
    auto result = located("a branch of " + std::string(api), where, f);
    const std::vector<nx::Tensor> results = result_leaves(api, result);
    auto program = staging.finish(results);
    add(std::move(program), staging.captures());
    return result;
  }
};

// The cond's index (an int32 scalar) from cond's pred or switch_'s index;
// throws the API's errors.
nx::Tensor cond_index(const nx::Tensor& pred);
nx::Tensor switch_index(const nx::Tensor& index, std::size_t branches);
[[noreturn]] void branch_results_differ(std::string_view api, const std::string& difference);
// Applies a cond over the branches (see ir/program.hpp): the captures of all
// of them are its operands.
std::vector<nx::Tensor> bind_cond(std::string_view api, const nx::Tensor& index, const TracedBranches& branches);

}  // namespace detail

// then_fn() when pred (one boolean, a bool scalar tensor) is true, else
// else_fn(). Both functions take no arguments (what they read from the
// enclosing code is captured) and must return the same structure, dtypes and
// shapes. Derivatives are those of the branch taken.
template <class Then, class Else>
  requires(std::invocable<Then&> && std::invocable<Else&> &&
           detail::Structures<std::invoke_result_t<Then&>, std::invoke_result_t<Else&>>)
auto cond(const nx::Tensor& pred, Then then_fn, Else else_fn,
          detail::CallSite where = detail::CallSite::current()) {
  const nx::Tensor index = detail::cond_index(pred);
  detail::TracedBranches branches;
  // In index order: the index is int32(pred), so else is branch 0.
  auto else_result = branches.trace("rune::cond", else_fn, where);
  auto then_result = branches.trace("rune::cond", then_fn, where);
  static_assert(std::is_same_v<decltype(then_result), decltype(else_result)>,
                "rune::cond: both branches must return the same type");
  if (auto difference =
          first_difference(else_result, then_result, "in the else branch's result", "in the then branch's"))
    detail::branch_results_differ("rune::cond", *difference);
  const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
  std::vector<nx::Tensor> outs = detail::bind_cond("rune::cond", index, branches);
  return rebuild(then_result, std::span<const nx::Tensor>(outs));
}
template <class Then, class Else>
auto cond(const nx::Tensor&, Then, Else, detail::CallSite = detail::CallSite::current()) {
  static_assert(std::invocable<Then&> && std::invocable<Else&>,
                "rune::cond: each branch is called with no arguments: capture what it reads");
  if constexpr (std::invocable<Then&> && std::invocable<Else&>)
    static_assert(detail::Structures<std::invoke_result_t<Then&>, std::invoke_result_t<Else&>>,
                  "rune::cond: a branch's result is not a structure: " RUNE_DETAIL_STRUCTURE_FIX);
  return detail::Misuse{};
}

// branches[index](), the index (an integer scalar tensor) clamped into
// [0, branches.size() - 1]. Every branch takes no arguments and must return
// the same structure, dtypes and shapes.
template <class R>
R switch_(const nx::Tensor& index, std::vector<std::function<R()>> branches,
          detail::CallSite where = detail::CallSite::current()) {
  const nx::Tensor clamped = detail::switch_index(index, branches.size());
  detail::TracedBranches traced;
  std::vector<R> results;
  for (std::size_t k = 0; k < branches.size(); ++k) {
    results.push_back(traced.trace("rune::switch_", branches[k], where));
    if (auto difference = first_difference(results[k], results[0], "in branch " + std::to_string(k) + "'s result",
                                           "in branch 0's"))
      detail::branch_results_differ("rune::switch_", *difference);
  }
  const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
  std::vector<nx::Tensor> outs = detail::bind_cond("rune::switch_", clamped, traced);
  return rebuild(results[0], std::span<const nx::Tensor>(outs));
}

}  // namespace rune
