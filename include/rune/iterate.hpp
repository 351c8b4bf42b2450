// rune::iterate: a loop that steps a carry until a condition holds, traced
// once.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rune/detail/diagnose.hpp"
#include "rune/detail/located.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
[[noreturn]] void iterate_max_negative(std::int64_t max);
[[noreturn]] void iterate_carry_differs(const std::string& difference);
// Throws unless `stop` is one boolean.
void check_until(const nx::Tensor& stop);
// A stand-in of until's result, the step program's parameter after the carry.
nx::Tensor until_result_like();
// Applies an iterate (see ir/program.hpp's IterateInfo for its inputs).
std::vector<nx::Tensor> bind_iterate(std::shared_ptr<const ir::Program> until, std::shared_ptr<const ir::Program> step,
                                     std::int64_t max, int carry_count, int until_captures,
                                     std::span<const nx::Tensor> inputs);
}  // namespace detail

// Steps the carry with f until until(carry) holds (tested before each step),
// at most max steps; until returns one boolean (a bool scalar tensor). Both
// functions are traced once into programs, so f must return the carry's
// structure, dtypes and shapes. Under vmap every lane stops on its own.
template <class Until, class F, class C>
  requires(detail::Structures<C> && std::invocable<Until&, const C&> && std::invocable<F&, const C&>)
C iterate(std::int64_t max, Until until, F f, const C& init,
          detail::CallSite where = detail::CallSite::current()) {
  if (max < 0) detail::iterate_max_negative(max);
  const std::vector<nx::Tensor> init_leaves = leaves(init);

  detail::Staging until_staging("rune::iterate");
  std::vector<nx::Tensor> until_params = until_staging.parameters(init_leaves);
  const nx::Tensor stop = detail::located("the until of rune::iterate", where, [&] {
    return until(rebuild(init, std::span<const nx::Tensor>(until_params)));
  });
  detail::check_until(stop);
  auto until_program = until_staging.finish(std::span<const nx::Tensor>(&stop, 1));

  detail::Staging step_staging("rune::iterate");
  std::vector<nx::Tensor> like = init_leaves;
  like.push_back(detail::until_result_like());
  std::vector<nx::Tensor> step_params = step_staging.parameters(like);
  C carry_in = rebuild(init, std::span<const nx::Tensor>(step_params).first(init_leaves.size()));
  auto carry_out = detail::located("the step of rune::iterate", where, [&] { return f(carry_in); });
  static_assert(std::is_same_v<std::decay_t<decltype(carry_out)>, C>, "rune::iterate: the step must return the carry's type");
  std::vector<nx::Tensor> results = result_leaves("rune::iterate", carry_out);
  if (auto difference = first_difference(carry_out, carry_in, "in the carry the step returned",
                                         "in the carry it received"))
    detail::iterate_carry_differs(*difference);
  auto step_program = step_staging.finish(results);

  std::vector<nx::Tensor> inputs = init_leaves;
  inputs.insert(inputs.end(), until_staging.captures().begin(), until_staging.captures().end());
  inputs.insert(inputs.end(), step_staging.captures().begin(), step_staging.captures().end());
  const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
  std::vector<nx::Tensor> outs = detail::bind_iterate(until_program, step_program, max, int(init_leaves.size()),
                                                      int(until_staging.captures().size()), inputs);
  return rebuild(init, std::span<const nx::Tensor>(outs));
}
template <class Until, class F, class C>
C iterate(std::int64_t, Until, F, const C& init, detail::CallSite = detail::CallSite::current()) {
  RUNE_DETAIL_DIAGNOSE_CALL("rune::iterate", "the carry is",
                            (std::invocable<Until&, const C&> && std::invocable<F&, const C&>),
                            "until or the step cannot be called with the carry", C);
  return init;
}

}  // namespace rune
