// rune::optim: gradient descent over structures (docs/optim.md).
//
//   auto opt = rune::optim::adam(1e-3);
//   auto state = opt.init(params);
//   std::tie(params, state) = opt.update(grads, state, params);
//
// Parameters, gradients and states are structures (rune/tree.hpp) whose
// leaves are real float tensors, and an update is written with nx
// functions, so a whole step compiles with rune::jit (the state may be
// donated), runs under rune::scan and differentiates.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "rune/nx.hpp"
#include "rune/tree.hpp"

namespace rune::optim {

// SGD's state: the velocity (a structure like the parameters, zeros at
// first), absent without momentum.
template <class P> struct SgdState {
  std::optional<P> velocity;
};

// Adam's state: the steps taken (a float64 scalar) and the running averages
// of the gradients (mu) and of their squares (nu), like the parameters.
template <class P> struct AdamState {
  nx::Tensor count;
  P mu, nu;
};

// (RUNE_TREE for the templates above.)
template <class P> constexpr auto rune_tree_fields(const SgdState<P>*) {
  return std::make_tuple(tree_detail::field("velocity", &SgdState<P>::velocity));
}
template <class P> constexpr auto rune_tree_fields(const AdamState<P>*) {
  return std::make_tuple(tree_detail::field("count", &AdamState<P>::count), tree_detail::field("mu", &AdamState<P>::mu),
                         tree_detail::field("nu", &AdamState<P>::nu));
}

namespace detail {

inline std::string number_text(double x) {  // the shortest text that reads back
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

// Throws "<api>: <name> = <value> is outside <range>" unless `ok`.
inline void require(bool ok, std::string_view api, std::string_view name, double value, std::string_view range) {
  if (!ok)
    throw std::invalid_argument(std::string(api) + ": " + std::string(name) + " = " + number_text(value) +
                                " is outside " + std::string(range));
}

// Gradients must have the parameters' structure, dtypes and shapes.
template <class P> void check_gradients(std::string_view api, const P& grads, const P& params) {
  if (auto d = first_difference(grads, params, "in the gradients", "in the parameters"))
    throw std::invalid_argument(std::string(api) + ": " + *d);
}

// A copy of `like` whose leaves are f(leaf of like, leaves of rest...).
template <class P, class F, class... R> P combine(const P& like, F f, const R&... rest) {
  return tree_detail::transform(f, like, rest...);
}

}  // namespace detail

// Stochastic gradient descent, with momentum m (heavy ball):
//   v <- m v + g,  p <- p - lr v;   without momentum p <- p - lr g.
class Sgd {
 public:
  Sgd(double learning_rate, double momentum) : learning_rate_(learning_rate), momentum_(momentum) {
    detail::require(std::isfinite(learning_rate), api, "learning_rate", learning_rate, "the finite numbers");
    detail::require(momentum >= 0 && momentum < 1, api, "momentum", momentum, "[0, 1)");
  }

  template <class P> SgdState<P> init(const P& params) const {
    if (momentum_ == 0) return {};
    return {map_leaves(params, [](const nx::Tensor& p) { return nx::zeros_like(p); })};
  }

  template <class P>
  std::pair<P, SgdState<P>> update(const P& grads, const SgdState<P>& state, const P& params) const {
    detail::check_gradients(api, grads, params);
    if (state.velocity.has_value() != (momentum_ != 0))
      throw std::invalid_argument(std::string(api) + ": the state " + (state.velocity ? "has" : "lacks") +
                                  " a velocity, and the momentum is " + detail::number_text(momentum_));
    const double lr = learning_rate_, m = momentum_;
    if (!state.velocity)
      return {detail::combine(params, [&](const nx::Tensor& p, const nx::Tensor& g) { return p - g * lr; }, grads),
              state};
    P velocity = detail::combine(
        *state.velocity, [&](const nx::Tensor& v, const nx::Tensor& g) { return v * m + g; }, grads);
    P next = detail::combine(params, [&](const nx::Tensor& p, const nx::Tensor& v) { return p - v * lr; }, velocity);
    return {std::move(next), SgdState<P>{std::move(velocity)}};
  }

 private:
  static constexpr std::string_view api = "rune::optim::sgd";
  double learning_rate_, momentum_;
};

// Adam (Kingma and Ba, 2015, with its bias correction): at step t = 1, 2, ...
//   mu <- b1 mu + (1 - b1) g,   nu <- b2 nu + (1 - b2) g^2,
//   p <- p - lr (mu / (1 - b1^t)) / (sqrt(nu / (1 - b2^t)) + eps),
// each leaf in its own dtype (the corrections computed in float64, then
// converted).
class Adam {
 public:
  Adam(double learning_rate, double b1, double b2, double eps)
      : learning_rate_(learning_rate), b1_(b1), b2_(b2), eps_(eps) {
    detail::require(std::isfinite(learning_rate), api, "learning_rate", learning_rate, "the finite numbers");
    detail::require(b1 >= 0 && b1 < 1, api, "b1", b1, "[0, 1)");
    detail::require(b2 >= 0 && b2 < 1, api, "b2", b2, "[0, 1)");
    detail::require(eps >= 0 && std::isfinite(eps), api, "eps", eps, "[0, infinity)");
  }

  template <class P> AdamState<P> init(const P& params) const {
    P zeros = map_leaves(params, [](const nx::Tensor& p) { return nx::zeros_like(p); });
    return {nx::scalar(nx::float64, 0), zeros, zeros};
  }

  template <class P>
  std::pair<P, AdamState<P>> update(const P& grads, const AdamState<P>& state, const P& params) const {
    detail::check_gradients(api, grads, params);
    const double lr = learning_rate_, b1 = b1_, b2 = b2_, eps = eps_;
    const nx::Tensor count = state.count + 1.;
    const nx::Tensor c1 = 1. - nx::pow(b1, count), c2 = 1. - nx::pow(b2, count);
    P mu = detail::combine(
        state.mu, [&](const nx::Tensor& m, const nx::Tensor& g) { return m * b1 + g * (1 - b1); }, grads);
    P nu = detail::combine(
        state.nu, [&](const nx::Tensor& v, const nx::Tensor& g) { return v * b2 + g * g * (1 - b2); }, grads);
    auto step = [&](const nx::Tensor& p, const nx::Tensor& m, const nx::Tensor& v) {
      const nx::Tensor m_hat = m / nx::cast(c1, p.dtype()), v_hat = v / nx::cast(c2, p.dtype());
      return p - m_hat * lr / (nx::sqrt(v_hat) + eps);
    };
    P next = detail::combine(params, step, mu, nu);
    return {std::move(next), AdamState<P>{count, std::move(mu), std::move(nu)}};
  }

 private:
  static constexpr std::string_view api = "rune::optim::adam";
  double learning_rate_, b1_, b2_, eps_;
};

inline Sgd sgd(double learning_rate, double momentum = 0.) { return Sgd(learning_rate, momentum); }
inline Adam adam(double learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8) {
  return Adam(learning_rate, b1, b2, eps);
}

}  // namespace rune::optim
