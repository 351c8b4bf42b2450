// rune::scan: a loop over the rows of xs carrying a state, traced once.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
// Checks xs and gives its number of rows; throws the API's errors.
std::int64_t scan_length(const std::vector<nx::Tensor>& xs);
[[noreturn]] void scan_carry_differs(const std::string& difference);
}  // namespace detail

// f(carry, row) -> std::pair<C, Y>. Returns the final carry and every Y
// stacked along a new leading axis. The step is traced once into a program
// (its C++ runs once, whatever the number of rows), so the carry it returns
// must have the structure, dtypes and shapes of the one it received.
template <class F, class C, class X>
auto scan(F f, const C& init, const X& xs) {
  std::vector<nx::Tensor> init_leaves = leaves(init), xs_leaves = leaves(xs);
  const std::int64_t length = detail::scan_length(xs_leaves);

  detail::Staging staging("rune::scan");
  std::vector<nx::Tensor> carry_params = staging.parameters(init_leaves);
  std::vector<nx::Tensor> row_params = staging.row_parameters(xs_leaves);
  C carry_in = rebuild(init, std::span<const nx::Tensor>(carry_params));
  X row_in = rebuild(xs, std::span<const nx::Tensor>(row_params));
  auto [carry_out, y] = f(carry_in, row_in);
  static_assert(std::is_same_v<std::decay_t<decltype(carry_out)>, C>,
                "rune::scan: the step must return the carry's type as the first of its pair");
  // The carry's leaves, then y's (the pair's walk order).
  std::vector<nx::Tensor> results = result_leaves("rune::scan", std::pair{carry_out, y});
  if (auto difference = first_difference(carry_out, carry_in, "in the carry the step returned",
                                         "in the carry it received"))
    detail::scan_carry_differs(*difference);
  auto step = staging.finish(results);

  std::vector<nx::Tensor> inputs = init_leaves;
  inputs.insert(inputs.end(), xs_leaves.begin(), xs_leaves.end());
  inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
  std::vector<nx::Tensor> outs =
      detail::bind_scan(step, length, int(init_leaves.size()), int(xs_leaves.size()), inputs);
  std::span<const nx::Tensor> all(outs);
  return std::pair{rebuild(init, all.first(init_leaves.size())), rebuild(y, all.subspan(init_leaves.size()))};
}

}  // namespace rune
