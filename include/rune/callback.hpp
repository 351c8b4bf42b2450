// rune::callback: C++ run on concrete values inside traced or compiled code.
#pragma once

#include <concepts>
#include <tuple>
#include <utility>

#include "rune/detail/diagnose.hpp"
#include "rune/detail/effects.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
[[noreturn]] void callback_result_differs(const std::string& difference);
}

// f(args...) runs on the arguments' elements: eagerly at once; traced, once
// per execution of the program, never at the trace. `like` gives the
// result's structure, dtypes, shapes and placement. Callbacks have no
// derivative (give the function a custom rule) and a program holding one
// cannot be saved.
template <class F, class R, class... Args>
  requires(detail::Structures<R, Args...> && std::invocable<F&, const Args&...>)
R callback(F f, const R& like, const Args&... args) {
  std::vector<nx::Tensor> in;
  (([&] {
     std::vector<nx::Tensor> l = leaves(args);
     in.insert(in.end(), l.begin(), l.end());
   }()),
   ...);
  auto run = [f, like, shapes = std::make_tuple(args...)](std::span<const nx::Tensor> values) {
    std::size_t at = 0;
    auto concrete = std::apply(
        [&](const auto&... a) {
          auto take = [&](const auto& arg) {
            std::size_t n = leaf_count(arg);
            auto v = rebuild(arg, values.subspan(at, n));
            at += n;
            return v;
          };
          return std::tuple<std::decay_t<decltype(a)>...>{take(a)...};
        },
        shapes);
    R result = std::apply(f, concrete);
    std::vector<nx::Tensor> out = result_leaves("rune::callback", result);
    if (auto d = first_difference(result, like, "in what the callback returned", "in like"))
      detail::callback_result_differs(*d);
    return out;
  };
  std::vector<nx::Tensor> like_leaves = leaves(like);
  std::vector<nx::Tensor> out = detail::bind_callback(in, like_leaves, run);
  return rebuild(like, std::span<const nx::Tensor>(out));
}
template <class F, class R, class... Args> R callback(F, const R& like, const Args&...) {
  RUNE_DETAIL_DIAGNOSE_CALL("rune::callback", "like or an argument is", (std::invocable<F&, const Args&...>),
                            "the function cannot be called with these arguments", R,
                            Args...);
  return like;
}

}  // namespace rune
