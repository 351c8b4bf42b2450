// Functions with custom derivative rules.
//
// custom_jvp(rule): rule(p) -> std::pair{q, tangent_map}, where
// tangent_map(tangents of p) -> tangents of q is linear. Forward mode applies
// the tangent map; reverse mode transposes the operations it issues; second
// order differentiates its code (the rule applies again one level down).
//
// custom_vjp(rule): rule(p) -> std::pair{q, pullback}, where
// pullback(cotangents of q) -> cotangents of p. Reverse mode calls the
// pullback; forward mode throws (give the function a custom_jvp rule).
#pragma once

#include <utility>

#include "rune/detail/autodiff.hpp"
#include "rune/tree.hpp"

namespace rune {

template <class Rule> struct CustomJvp {
  Rule rule;
  template <class P> auto operator()(const P& p) const {
    std::vector<nx::Tensor> in = leaves(p);
    detail::CustomCall call(in, "rune::custom_jvp");
    if (!call.differentiating()) return rule(p).first;
    std::vector<nx::Tensor> primals = call.primals(), tangents = call.tangents();
    const P below = rebuild(p, std::span<const nx::Tensor>(primals));
    auto [value, tangent_map] = rule(below);
    // When the primals carry an outer derivative, the rule applies there too.
    auto q = detail::CustomCall(primals, "rune::custom_jvp").differentiating() ? (*this)(below) : value;
    auto dq = tangent_map(rebuild(p, std::span<const nx::Tensor>(tangents)));
    std::vector<nx::Tensor> out = call.with_tangents(leaves(q), leaves(dq));
    return rebuild(q, std::span<const nx::Tensor>(out));
  }
};

template <class Rule> struct CustomVjp {
  Rule rule;
  template <class P> auto operator()(const P& p) const {
    std::vector<nx::Tensor> in = leaves(p);
    detail::CustomCall call(in, "rune::custom_vjp");
    if (!call.differentiating()) return rule(p).first;
    std::vector<nx::Tensor> primals = call.primals();
    auto [q, pullback] = rule(rebuild(p, std::span<const nx::Tensor>(primals)));
    auto transpose = [pullback, like = q](std::span<const nx::Tensor> cts) {
      return leaves(pullback(rebuild(like, cts)));
    };
    std::vector<nx::Tensor> out = call.with_pullback(leaves(q), transpose);
    return rebuild(q, std::span<const nx::Tensor>(out));
  }
};

template <class Rule> auto custom_jvp(Rule rule) { return CustomJvp<Rule>{std::move(rule)}; }
template <class Rule> auto custom_vjp(Rule rule) { return CustomVjp<Rule>{std::move(rule)}; }

}  // namespace rune
