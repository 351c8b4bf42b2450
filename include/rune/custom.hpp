// Functions with custom derivative rules.
//
// custom_jvp(rule): rule(p) -> std::pair{q, tangent_map}, where
// tangent_map(tangents of p) -> tangents of q is linear. Forward mode applies
// the tangent map; reverse mode transposes the operations it issues; second
// order differentiates its code.
//
// custom_vjp(rule): rule(p) -> std::pair{q, pullback}, where
// pullback(cotangents of q) -> cotangents of p. Reverse mode calls the
// pullback (traced into a program, so the values it reads are kept as
// residuals); forward mode throws (give the function a custom_jvp rule).
//
// Traced (in a scan's step, under rune::program or jit), the call is
// recorded with its rule, so differentiating the program later applies it.
// Values the rule's code reads from an enclosing trace get no derivative
// through the rule. A user error raised in the rule, its tangent map or its
// pullback says where custom_jvp / custom_vjp was called.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "rune/detail/custom_rule.hpp"
#include "rune/detail/located.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {

// rule(p), a user error in it located at `where`.
template <class Rule, class P> auto run_located(const Rule& rule, const P& p, bool reverse, const CallSite& where) {
  return located(reverse ? "the rule of rune::custom_vjp" : "the rule of rune::custom_jvp", where, [&] { return rule(p); });
}

// A rule over tensor leaves, from a rule over structures like P. The
// output's structure is learnt the first time the rule runs.
template <class Rule, class P, class Q> struct TypedRule final : CustomRule {
  Rule rule;
  P p_like;
  CallSite where;  // where custom_jvp / custom_vjp was called
  mutable std::mutex mutex;
  mutable std::optional<Q> q_like;

  TypedRule(Rule r, P p, bool reverse, CallSite at) : rule(std::move(r)), p_like(std::move(p)), where(at) {
    reverse_only = reverse;
  }

  // rule(p), a user error in it located at `where`.
  auto run_rule(const P& p) const { return run_located(rule, p, reverse_only, where); }

  P structure(std::span<const nx::Tensor> leaves_of_p) const { return rebuild(p_like, leaves_of_p); }
  std::vector<nx::Tensor> learn(const Q& q) const {
    std::lock_guard lock(mutex);
    if (!q_like) q_like = q;
    return leaves(q);
  }
  Q output(std::span<const nx::Tensor> out) const {
    std::lock_guard lock(mutex);
    return rebuild(*q_like, out);
  }

  std::size_t input_count() const override { return leaf_count(p_like); }
  std::vector<nx::Tensor> call(std::span<const nx::Tensor> inputs) const override {
    return learn(run_rule(structure(inputs)).first);
  }
  std::pair<std::shared_ptr<const ir::Program>, std::vector<nx::Tensor>> trace(
      std::span<const nx::Tensor> inputs) const override {
    Staging staging(reverse_only ? "rune::custom_vjp" : "rune::custom_jvp");
    std::vector<nx::Tensor> params = staging.parameters(inputs);
    std::vector<nx::Tensor> out = learn(run_rule(structure(params)).first);
    auto program = staging.finish(out);
    return {program, staging.captures()};
  }
  std::pair<std::vector<nx::Tensor>, std::vector<nx::Tensor>> jvp(std::span<const nx::Tensor> primals,
                                                                  std::span<const nx::Tensor> tangents) const override {
    if constexpr (requires { leaves(rule(structure(primals)).second(structure(tangents))); }) {
      auto rule_pair = run_rule(structure(primals));  // (not a structured binding: clang 14 cannot capture one)
      return {learn(rule_pair.first), leaves(located("the tangent map of rune::custom_jvp", where,
                                                     [&] { return rule_pair.second(structure(tangents)); }))};
    } else {
      return {};  // (a custom_vjp rule: never asked)
    }
  }
  std::pair<std::vector<nx::Tensor>, Pullback> vjp(std::span<const nx::Tensor> primals) const override {
    if constexpr (requires { rule(structure(primals)).second; }) {
      auto [q, pullback] = run_rule(structure(primals));
      std::vector<nx::Tensor> out = learn(q);
      // (Init-captures: C++20 lets a lambda capture a structured binding,
      // clang before 16 does not.)
      Pullback erased = [pullback = pullback, like = q, at = where](std::span<const nx::Tensor> cts) {
        return leaves(located("the pullback of rune::custom_vjp", at, [&] { return pullback(rebuild(like, cts)); }));
      };
      return {out, erased};
    } else {
      return {};
    }
  }
};

// Calls a function with a rule: with nothing traced, just runs it.
template <class Rule, class P> auto call_custom(const Rule& rule, const P& p, bool reverse, const CallSite& where) {
  std::vector<nx::Tensor> in = leaves(p);
  if (!tracing(in)) return run_located(rule, p, reverse, where).first;
  using Q = std::decay_t<decltype(rule(p).first)>;
  auto typed = std::make_shared<TypedRule<Rule, P, Q>>(rule, p, reverse, where);
  const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
  std::vector<nx::Tensor> out = bind_custom(typed, in);
  return typed->output(out);
}

}  // namespace detail

template <class Rule> struct CustomJvp {
  Rule rule;
  detail::CallSite where{};  // where custom_jvp was called, for errors raised in the rule
  template <class P> auto operator()(const P& p) const { return detail::call_custom(rule, p, false, where); }
};

template <class Rule> struct CustomVjp {
  Rule rule;
  detail::CallSite where{};  // where custom_vjp was called, for errors raised in the rule
  template <class P> auto operator()(const P& p) const { return detail::call_custom(rule, p, true, where); }
};

template <class Rule> auto custom_jvp(Rule rule, detail::CallSite where = detail::CallSite::current()) {
  return CustomJvp<Rule>{std::move(rule), where};
}
template <class Rule> auto custom_vjp(Rule rule, detail::CallSite where = detail::CallSite::current()) {
  return CustomVjp<Rule>{std::move(rule), where};
}

}  // namespace rune
