// Differentiation: jvp, vjp, grad and their family.
//
// grad runs f once per call, over values that carry a derivative: inside
// it, nx::item reads the primal and a C++ `if` differentiates the path
// taken. Transformations nest to any order, and each differentiates only its
// own function's values. Gradients are fresh C-order tensors; a leaf that
// receives no contribution gets +0; integer and bool leaves get zeros.
#pragma once

#include <cmath>
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "rune/detail/autodiff.hpp"
#include "rune/detail/diagnose.hpp"
#include "rune/nx.hpp"
#include "rune/tree.hpp"

namespace rune {

nx::Tensor detach(nx::Operand x);  // x, with a zero derivative

namespace detail {
void check_objective(const nx::Tensor& y, std::string_view entry_point);
void check_parameters(std::span<const nx::Tensor> leaves, std::string_view entry_point);
[[noreturn]] void structures_differ(std::string_view entry_point, const std::string& difference);
nx::Tensor fresh(const nx::Tensor& t);

template <class P> P fresh_structure(const P& like, const std::vector<nx::Tensor>& values) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : values) out.push_back(fresh(t));
  return rebuild(like, std::span<const nx::Tensor>(out));
}

// Runs f on params as values that carry a derivative; gives f's result (with
// its tensors made primal) and the linear map of its first `linear_leaves`
// leaves (all of them by default).
template <class F, class P>
auto linearize(F& f, const P& params, std::string_view entry_point,
               std::optional<std::size_t> linear_leaves = std::nullopt) {
  std::vector<nx::Tensor> in = leaves(params);
  Linearization lin(entry_point);
  std::vector<nx::Tensor> wrapped = lin.inputs(in);
  auto result = f(rebuild(params, std::span<const nx::Tensor>(wrapped)));
  std::vector<nx::Tensor> out = result_leaves(entry_point, result);
  std::vector<nx::Tensor> primal = lin.finish(out, linear_leaves.value_or(out.size()));
  return std::pair{rebuild(result, std::span<const nx::Tensor>(primal)), lin.linear_map()};
}

template <class F, class P>
std::pair<nx::Tensor, P> value_and_grad_impl(F& f, const P& params, std::string_view entry_point) {
  check_parameters(leaves(params), entry_point);
  auto [value, map] = linearize(f, params, entry_point);
  static_assert(std::is_same_v<decltype(value), nx::Tensor>, "rune::grad: the objective must return an nx::Tensor");
  check_objective(value, entry_point);
  nx::Tensor one = nx::ones_like(value);
  return {value, fresh_structure(params, pull_back(*map, std::span<const nx::Tensor>(&one, 1), entry_point))};
}
}  // namespace detail

// The gradient of a scalar objective with respect to every tensor of params.
template <class F, class P>
  requires(detail::Differentiable<P> && std::invocable<F&, const P&>)
P grad(F f, const P& params) {
  return detail::value_and_grad_impl(f, params, "rune::grad").second;
}
template <class F, class P> P grad(F, const P& params) {
  RUNE_DETAIL_DIAGNOSE_PARAMETERS("rune::grad", (std::invocable<F&, const P&>), P);
  return params;
}
template <class F, class P, class... More>
  requires(sizeof...(More) > 0)
auto grad(F, const P&, const More&...) {
  static_assert(sizeof...(More) == 0, "rune::grad: several arguments: " RUNE_DETAIL_ARGNUMS_FIX);
  return detail::Misuse{};
}
// The wrapping form: a callable P -> P.
template <class F> auto grad(F f) {
  return [f](const auto&... params) { return grad(f, params...); };
}

template <class F, class P>
  requires(detail::Differentiable<P> && std::invocable<F&, const P&>)
std::pair<nx::Tensor, P> value_and_grad(F f, const P& params) {
  return detail::value_and_grad_impl(f, params, "rune::value_and_grad");
}
template <class F, class P> std::pair<nx::Tensor, P> value_and_grad(F, const P& params) {
  RUNE_DETAIL_DIAGNOSE_PARAMETERS("rune::value_and_grad", (std::invocable<F&, const P&>), P);
  return {nx::Tensor(), params};
}
template <class F, class P, class... More>
  requires(sizeof...(More) > 0)
auto value_and_grad(F, const P&, const More&...) {
  static_assert(sizeof...(More) == 0, "rune::value_and_grad: several arguments: " RUNE_DETAIL_ARGNUMS_FIX);
  return detail::Misuse{};
}

// ---- with respect to some arguments of f(args...): rune::grad<0, 2>(f, a, b, c)
// The chosen arguments' gradients: one index gives that argument's gradient,
// several a std::tuple of them in the order given. The other arguments are
// passed as they are (any type), not differentiated.
namespace detail {
template <std::size_t... I> constexpr bool distinct() {
  const std::size_t index[] = {I...};
  for (std::size_t i = 0; i < sizeof...(I); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (index[i] == index[j]) return false;
  return true;
}

// Writes the chosen arguments (chosen's k-th element to position I_k).
template <std::size_t... I, class All, class Chosen, std::size_t... K>
void place_chosen(All& all, const Chosen& chosen, std::index_sequence<K...>) {
  ((std::get<I>(all) = std::get<K>(chosen)), ...);
}

template <std::size_t... I, class F, class... A>
auto value_and_grad_of_arguments(F& f, std::string_view entry_point, const A&... args) {
  using All = std::tuple<A...>;
  using Chosen = std::tuple<std::tuple_element_t<I, All>...>;
  const All all{args...};
  auto of_chosen = [&](const Chosen& chosen) {
    All with = all;
    place_chosen<I...>(with, chosen, std::index_sequence_for<std::tuple_element_t<I, All>...>{});
    return std::apply(f, std::as_const(with));
  };
  auto [value, g] = value_and_grad_impl(of_chosen, Chosen{std::get<I>(all)...}, entry_point);
  if constexpr (sizeof...(I) == 1) return std::pair{value, std::get<0>(g)};
  else return std::pair{value, g};
}
}  // namespace detail

// `body` (a statement), unless the argument indices I... of f(args...) are
// misused: then the first error is one static assertion saying how.
#define RUNE_DETAIL_CHECKED_ARGNUMS(entry, I, A, body)                                                            \
  if constexpr (!((I < sizeof...(A)) && ...))                                                                    \
    static_assert(((I < sizeof...(A)) && ...), entry ": an argument index is past the last argument");          \
  else if constexpr (!detail::distinct<I...>())                                                                  \
    static_assert(detail::distinct<I...>(), entry ": an argument index is given twice");                        \
  else if constexpr (!detail::Differentiable<std::tuple<std::tuple_element_t<I, std::tuple<A...>>...>>)         \
    static_assert(detail::Differentiable<std::tuple<std::tuple_element_t<I, std::tuple<A...>>...>>,             \
                  entry ": the chosen arguments hold no tensor to differentiate: wrap a number in "             \
                  "nx::scalar(nx::float64, x); a struct needs RUNE_TREE(Type, field, ...)");                   \
  else if constexpr (!std::invocable<F&, const A&...>)                                                           \
    static_assert(std::invocable<F&, const A&...>, entry ": the function cannot be called with the arguments"   \
                  " (as const references)");                                                                     \
  else                                                                                                           \
    body

template <std::size_t... I, class F, class... A>
  requires(sizeof...(I) > 0)
auto value_and_grad(F f, const A&... args) {
  RUNE_DETAIL_CHECKED_ARGNUMS("rune::value_and_grad", I, A,
                              return detail::value_and_grad_of_arguments<I...>(f, "rune::value_and_grad", args...);)
}
template <std::size_t... I, class F, class... A>
  requires(sizeof...(I) > 0)
auto grad(F f, const A&... args) {
  RUNE_DETAIL_CHECKED_ARGNUMS("rune::grad", I, A,
                              return detail::value_and_grad_of_arguments<I...>(f, "rune::grad", args...).second;)
}
// The wrapping form: a callable (args...) -> the chosen arguments' gradients.
template <std::size_t... I, class F>
  requires(sizeof...(I) > 0)
auto grad(F f) {
  return [f](const auto&... args) { return grad<I...>(f, args...); };
}

// f: P -> std::pair<Tensor, Aux>; Aux is returned as computed (not differentiated).
template <class F, class P>
  requires(detail::Differentiable<P> && std::invocable<F&, const P&>)
auto value_and_grad_aux(F f, const P& params) {
  const std::string_view entry = "rune::value_and_grad_aux";
  detail::check_parameters(leaves(params), entry);
  auto [result, map] = detail::linearize(f, params, entry, 1);  // the objective is the pair's first leaf
  detail::check_objective(result.first, entry);
  nx::Tensor one = nx::ones_like(result.first);
  P g = detail::fresh_structure(params, detail::pull_back(*map, std::span<const nx::Tensor>(&one, 1), entry));
  return std::tuple{result.first, g, result.second};
}

// f's result and its pullback: a callable from cotangents shaped like the
// result to cotangents of params; reusable, from any thread.
template <class F, class P>
  requires(detail::Differentiable<P> && std::invocable<F&, const P&>)
auto vjp(F f, const P& params) {
  const std::string_view entry = "rune::vjp";
  auto [result, map] = detail::linearize(f, params, entry);
  using Q = decltype(result);
  auto pullback = [map = std::shared_ptr<const detail::LinearMap>(map), like = result,
                   shape = params](const Q& cotangents) {
    if (auto d = first_difference(like, cotangents, "in the result", "in the cotangents"))
      detail::structures_differ("rune::vjp", *d);
    std::vector<nx::Tensor> cts = leaves(cotangents);
    return detail::fresh_structure(shape, detail::pull_back(*map, cts, "rune::vjp"));
  };
  return std::pair{result, pullback};
}

// f's result and its derivative along `tangents` (forward mode).
template <class F, class P>
  requires(detail::Differentiable<P> && std::invocable<F&, const P&>)
auto jvp(F f, const P& params, const P& tangents) {
  if (auto d = first_difference(params, tangents, "in the parameters", "in the tangents"))
    detail::structures_differ("rune::jvp", *d);
  std::vector<nx::Tensor> primal_leaves = leaves(params), tangent_leaves = leaves(tangents);
  detail::Forward fwd("rune::jvp");
  std::vector<nx::Tensor> wrapped = fwd.inputs(primal_leaves, tangent_leaves);
  auto result = f(rebuild(params, std::span<const nx::Tensor>(wrapped)));
  auto [primal, tangent] = fwd.finish(result_leaves("rune::jvp", result));
  return std::pair{rebuild(result, std::span<const nx::Tensor>(primal)),
                   rebuild(result, std::span<const nx::Tensor>(tangent))};
}

template <class F, class P> auto value_and_grad_aux(F, const P&) {
  RUNE_DETAIL_DIAGNOSE_PARAMETERS("rune::value_and_grad_aux", (std::invocable<F&, const P&>), P);
  return detail::Misuse{};
}
template <class F, class P> auto vjp(F, const P&) {
  RUNE_DETAIL_DIAGNOSE_PARAMETERS("rune::vjp", (std::invocable<F&, const P&>), P);
  return detail::Misuse{};
}
template <class F, class P> auto jvp(F, const P&, const P&) {
  RUNE_DETAIL_DIAGNOSE_PARAMETERS("rune::jvp", (std::invocable<F&, const P&>), P);
  return detail::Misuse{};
}

namespace detail {
// The i-th basis tensor of x's type.
inline nx::Tensor basis(const nx::Tensor& x, std::int64_t i) {
  std::vector<double> v(std::size_t(x.numel()), 0.);
  v[std::size_t(i)] = 1.;
  return nx::create(x.dtype(), x.shape(), std::span<const double>(v));
}
inline nx::Shape joined(const nx::Shape& a, const nx::Shape& b) {
  nx::Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}
}  // namespace detail

// The Jacobian of f: Tensor -> Tensor at x, of shape f(x).shape + x.shape,
// column by column (forward mode).
template <class F> nx::Tensor jacfwd(F f, const nx::Tensor& x) {
  std::vector<nx::Tensor> columns;
  nx::Shape out_shape;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto [y, t] = jvp(f, x, detail::basis(x, i));
    out_shape = y.shape();
    columns.push_back(nx::reshape(t, {-1}));
  }
  if (columns.empty()) return nx::zeros(x.dtype(), detail::joined(f(x).shape(), x.shape()));
  return nx::reshape(nx::stack(columns, 1), detail::joined(out_shape, x.shape()));
}

// The Jacobian row by row (reverse mode: one linearization, a pullback per row).
template <class F> nx::Tensor jacrev(F f, const nx::Tensor& x) {
  auto [y, pullback] = vjp(f, x);
  std::vector<nx::Tensor> rows;
  for (std::int64_t i = 0; i < y.numel(); ++i) rows.push_back(nx::reshape(pullback(detail::basis(y, i)), {-1}));
  if (rows.empty()) return nx::zeros(x.dtype(), detail::joined(y.shape(), x.shape()));
  return nx::reshape(nx::stack(rows), detail::joined(y.shape(), x.shape()));
}

// The Hessian of a scalar f at x: forward over reverse.
template <class F> nx::Tensor hessian(F f, const nx::Tensor& x) {
  return jacfwd([f](const nx::Tensor& v) { return grad(f, v); }, x);
}

struct GradCheck {
  bool ok = true;
  std::string message;
  explicit operator bool() const { return ok; }
};

namespace detail {
std::string grad_check_message(int direction, double numeric, double analytic);
// A deterministic direction for the k-th check: entries sin(k * 7.1 + i * 1.3).
template <class P> P direction(const P& params, int k) {
  int i = 0;
  return map_leaves(params, [&](const nx::Tensor& t) {
    std::vector<double> v(std::size_t(t.numel()));
    for (double& e : v) e = std::sin(double(k) * 7.1 + double(i++) * 1.3);
    return nx::create(t.dtype(), t.shape(), std::span<const double>(v));
  });
}
template <class P> double inner(const P& a, const P& b) {
  std::vector<nx::Tensor> x = leaves(a), y = leaves(b);
  double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (differentiable(x[i])) total += nx::item(nx::sum(nx::cast(x[i] * y[i], nx::float64)));
  return total;
}
}  // namespace detail

// Compares the gradient with central differences along two deterministic
// directions: ok when |numeric - analytic| <= tol * max(1, |numeric|, |analytic|).
template <class F, class P>
GradCheck check_grads(F f, const P& params, double eps = 1e-4, double tol = 1e-2) {
  P g = grad(f, params);
  for (int k = 1; k <= 2; ++k) {
    P v = detail::direction(params, k);
    std::vector<nx::Tensor> p = leaves(params), d = leaves(v);
    auto shifted = [&](double s) {
      std::vector<nx::Tensor> moved;
      for (std::size_t i = 0; i < p.size(); ++i) moved.push_back(detail::differentiable(p[i]) ? p[i] + d[i] * s : p[i]);
      return nx::item(f(rebuild(params, std::span<const nx::Tensor>(moved))));
    };
    const double numeric = (shifted(eps) - shifted(-eps)) / (2 * eps);
    const double analytic = detail::inner(g, v);
    if (std::fabs(numeric - analytic) > tol * std::max({1., std::fabs(numeric), std::fabs(analytic)}))
      return {false, detail::grad_check_message(k, numeric, analytic)};
  }
  return {};
}

}  // namespace rune
