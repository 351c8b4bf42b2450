// rune::scan: a loop over the rows of xs carrying a state, traced once.
#pragma once

#include <concepts>
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
// Checks xs and gives its number of rows; throws the API's errors.
std::int64_t scan_length(const std::vector<nx::Tensor>& xs);
// Throws unless a scan by length may take `length` rows (0 or more).
void check_scan_length(std::int64_t length);
[[noreturn]] void scan_carry_differs(const std::string& difference);

// What the xs overload takes: anything but an integer, which is a length.
// (A concept, so that the overload and its misuse twin share the constraint.)
template <class X> concept ScannedArrays = !std::is_integral_v<X>;
// What a step returns: the new carry and the row's output, as a pair (or
// anything of two elements that unpacks like one).
template <class R> concept StepResult = requires { std::tuple_size<R>::value; } && std::tuple_size_v<R> == 2;

// Traces step(carry, row leaves) once and binds the scan of `length` rows
// over xs_leaves (none: a scan by length).
template <class C, class Step>
auto staged_scan(const C& init, const std::vector<nx::Tensor>& xs_leaves, std::int64_t length, Step step,
                 const CallSite& where) {
  std::vector<nx::Tensor> init_leaves = leaves(init);
  detail::Staging staging("rune::scan");
  std::vector<nx::Tensor> carry_params = staging.parameters(init_leaves);
  std::vector<nx::Tensor> row_params = staging.row_parameters(xs_leaves);
  C carry_in = rebuild(init, std::span<const nx::Tensor>(carry_params));
  using Returned = std::decay_t<std::invoke_result_t<Step&, const C&, std::span<const nx::Tensor>>>;
  if constexpr (!StepResult<Returned>) {
    static_assert(StepResult<Returned>,
                  "rune::scan: the step must return a pair of the new carry and the row's output: "
                  "return std::pair{carry, y} (std::pair{carry, std::tuple<>{}} when a row has no output)");
    return std::pair{init, Misuse{}};
  } else {
    auto [carry_out, y] =
        located("the step of rune::scan", where, [&] { return step(carry_in, std::span<const nx::Tensor>(row_params)); });
    static_assert(std::is_same_v<std::decay_t<decltype(carry_out)>, C>,
                  "rune::scan: the step must return the carry's type as the first of its pair");
    // The carry's leaves, then y's (the pair's walk order).
    std::vector<nx::Tensor> results = result_leaves("rune::scan", std::pair{carry_out, y});
    if (auto difference = first_difference(carry_out, carry_in, "in the carry the step returned",
                                           "in the carry it received"))
      detail::scan_carry_differs(*difference);
    auto program = staging.finish(results);

    std::vector<nx::Tensor> inputs = init_leaves;
    inputs.insert(inputs.end(), xs_leaves.begin(), xs_leaves.end());
    inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
    const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
    std::vector<nx::Tensor> outs =
        detail::bind_scan(program, length, int(init_leaves.size()), int(xs_leaves.size()), inputs);
    std::span<const nx::Tensor> all(outs);
    return std::pair{rebuild(init, all.first(init_leaves.size())), rebuild(y, all.subspan(init_leaves.size()))};
  }
}
}  // namespace detail

// f(carry, row) -> std::pair<C, Y>. Returns the final carry and every Y
// stacked along a new leading axis. The step is traced once into a program
// (its C++ runs once, whatever the number of rows), so the carry it returns
// must have the structure, dtypes and shapes of the one it received.
template <class F, class C, class X>
  requires(detail::ScannedArrays<X> && detail::Structures<C, X> && std::invocable<F&, const C&, const X&>)
auto scan(F f, const C& init, const X& xs, detail::CallSite where = detail::CallSite::current()) {
  std::vector<nx::Tensor> xs_leaves = leaves(xs);
  const std::int64_t length = detail::scan_length(xs_leaves);
  return detail::staged_scan(init, xs_leaves, length, [&](const C& carry, std::span<const nx::Tensor> row) {
    return f(carry, rebuild(xs, row));
  }, where);
}

template <class F, class C, class X>
  requires detail::ScannedArrays<X>
auto scan(F, const C&, const X&, detail::CallSite = detail::CallSite::current()) {
  RUNE_DETAIL_DIAGNOSE_CALL("rune::scan", "the carry or xs is", (std::invocable<F&, const C&, const X&>),
                            "the step cannot be called with the carry and a row of xs", C, X);
  return detail::Misuse{};
}

// The scan by length: f(carry) -> std::pair<C, Y>, run `length` times (0 or
// more), with no xs.
template <class F, class C>
  requires(detail::Structures<C> && std::invocable<F&, const C&>)
auto scan(F f, const C& init, std::int64_t length, detail::CallSite where = detail::CallSite::current()) {
  detail::check_scan_length(length);
  return detail::staged_scan(
      init, {}, length, [&](const C& carry, std::span<const nx::Tensor>) { return f(carry); }, where);
}
template <class F, class C>
auto scan(F, const C&, std::int64_t, detail::CallSite = detail::CallSite::current()) {
  RUNE_DETAIL_DIAGNOSE_CALL("rune::scan", "the carry is", (std::invocable<F&, const C&>),
                            "the step cannot be called with the carry", C);
  return detail::Misuse{};
}

}  // namespace rune
