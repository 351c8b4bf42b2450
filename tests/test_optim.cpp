// rune::optim: SGD (with and without momentum) and Adam against values
// computed by hand, over a struct of two tensors; the same bits compiled,
// with the state donated; a quadratic minimized; the errors.
#include <cmath>

#include "helpers.hpp"
#include <rune/optim.hpp>
#include <rune/rune.hpp>

using nx::Tensor;

namespace model {
struct Params {
  Tensor w, b;
};
RUNE_TREE(Params, w, b);
}  // namespace model

using model::Params;

namespace {

Params start() { return {test::f64({2}, {1, -2}), nx::scalar(nx::float64, 0.5)}; }
// The gradients of steps 1, 2, 3.
Params gradient(int step) {
  const double s = step == 2 ? -2 : 1;
  return {test::f64({2}, {0.5 * s, -1}), nx::scalar(nx::float64, 2 * s)};
}

void check_close(const Params& got, std::initializer_list<double> w, double b) {
  const std::vector<double> gw = test::values(got.w);
  std::size_t i = 0;
  for (double x : w) CHECK(gw[i++] == Approx(x).epsilon(1e-13));
  CHECK(nx::item(got.b) == Approx(b).epsilon(1e-13));
}

bool same_bits(const Params& a, const Params& b) { return test::same_bits(a.w, b.w) && test::same_bits(a.b, b.b); }

// Adam on one number, in plain doubles, as Kingma and Ba write it.
struct ScalarAdam {
  double lr, b1 = 0.9, b2 = 0.999, eps = 1e-8, m = 0, v = 0;
  int t = 0;
  double step(double p, double g) {
    ++t;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    const double m_hat = m / (1 - std::pow(b1, t)), v_hat = v / (1 - std::pow(b2, t));
    return p - lr * m_hat / (std::sqrt(v_hat) + eps);
  }
};

}  // namespace

TEST_CASE("sgd: p - lr g") {
  auto opt = rune::optim::sgd(0.1);
  Params p = start();
  auto state = opt.init(p);
  CHECK_FALSE(state.velocity.has_value());
  for (int step = 1; step <= 3; ++step) std::tie(p, state) = opt.update(gradient(step), state, p);
  // w: 1 - 0.1 (0.5 - 1 + 0.5), -2 - 0.1 (-1 - 1 - 1); b: 0.5 - 0.1 (2 - 4 + 2)
  check_close(p, {1, -1.7}, 0.5);
}

TEST_CASE("sgd with momentum: v <- m v + g, p <- p - lr v") {
  auto opt = rune::optim::sgd(0.1, 0.5);
  Params p = start();
  auto state = opt.init(p);
  REQUIRE(state.velocity.has_value());
  CHECK(test::values(state.velocity->w) == std::vector<double>{0, 0});
  for (int step = 1; step <= 3; ++step) std::tie(p, state) = opt.update(gradient(step), state, p);
  // w[0]: v = 0.5, -0.75, 0.125; p = 1 - 0.05 + 0.075 - 0.0125
  // w[1]: v = -1, -1.5, -1.75;   p = -2 + 0.1 + 0.15 + 0.175
  // b:    v = 2, -3, 0.5;        p = 0.5 - 0.2 + 0.3 - 0.05
  check_close(p, {1.0125, -1.575}, 0.55);
  CHECK(test::values(state.velocity->w) == std::vector<double>{0.125, -1.75});
}

TEST_CASE("adam: Kingma and Ba's update with bias correction") {
  auto opt = rune::optim::adam(0.1);
  Params p = start();
  auto state = opt.init(p);
  CHECK(nx::item(state.count) == 0);
  // A first step moves each parameter by lr g / (|g| + eps): m and v
  // corrected are g and g^2.
  auto [one, after] = opt.update(gradient(1), state, p);
  const double unit = 0.1 * 0.5 / (0.5 + 1e-8);
  check_close(one, {1 - unit, -2 + 0.1 / (1 + 1e-8)}, 0.5 - 0.1 * 2 / (2 + 1e-8));
  CHECK(nx::item(after.count) == 1);
  ScalarAdam w0{0.1}, w1{0.1}, b{0.1};
  double pw0 = 1, pw1 = -2, pb = 0.5;
  for (int step = 1; step <= 3; ++step) {
    const Params g = gradient(step);
    std::tie(p, state) = opt.update(g, state, p);
    pw0 = w0.step(pw0, nx::item(g.w, {0}));
    pw1 = w1.step(pw1, nx::item(g.w, {1}));
    pb = b.step(pb, nx::item(g.b));
  }
  check_close(p, {pw0, pw1}, pb);
  CHECK(nx::item(state.count) == 3);
}

TEST_CASE("a compiled update gives eager's bits, with its state donated") {
  auto sgd = rune::optim::sgd(0.1, 0.9);
  auto adam = rune::optim::adam(0.05, 0.8, 0.99, 1e-6);
  auto sgd_step = rune::jit([&](const Params& g, const rune::optim::SgdState<Params>& s, const Params& p) {
    return sgd.update(g, s, p);
  });
  auto adam_step = rune::jit([&](const Params& g, const rune::optim::AdamState<Params>& s, const Params& p) {
    return adam.update(g, s, p);
  });
  Params p1 = start(), p2 = start(), q1 = start(), q2 = start();
  auto s1 = sgd.init(p1), s2 = sgd.init(p2);
  auto a1 = adam.init(q1), a2 = adam.init(q2);
  for (int step = 1; step <= 3; ++step) {
    std::tie(p1, s1) = sgd.update(gradient(step), s1, p1);
    std::tie(p2, s2) = sgd_step(gradient(step), rune::map_leaves(s2, nx::donate), p2);
    std::tie(q1, a1) = adam.update(gradient(step), a1, q1);
    std::tie(q2, a2) = adam_step(gradient(step), rune::map_leaves(a2, nx::donate), q2);
    CHECK(same_bits(p1, p2));
    CHECK(same_bits(q1, q2));
  }
  CHECK(sgd_step.traces() == 1);
  CHECK(adam_step.traces() == 1);
}

TEST_CASE("optimizers minimize a quadratic, a whole step compiled") {
  const Tensor target = test::f64({2}, {3, -1});
  auto loss = [&](const Params& p) { return nx::sum(nx::square(p.w - target)) + nx::square(p.b + 2.) * 10.; };
  auto run = [&](auto opt, int steps) {
    Params p = start();
    auto state = opt.init(p);
    auto step = rune::jit([&](const Params& p, const decltype(state)& s) { return opt.update(rune::grad(loss, p), s, p); });
    for (int i = 0; i < steps; ++i) std::tie(p, state) = step(p, state);
    return p;
  };
  for (const Params& p : {run(rune::optim::sgd(0.04), 300), run(rune::optim::sgd(0.01, 0.9), 300),
                          run(rune::optim::adam(0.05), 1000)}) {
    CHECK(test::values(p.w)[0] == Approx(3).margin(1e-3));
    CHECK(test::values(p.w)[1] == Approx(-1).margin(1e-3));
    CHECK(nx::item(p.b) == Approx(-2).margin(1e-3));
  }
}

TEST_CASE("rune::optim's errors") {
  CHECK_THROWS_WITH(rune::optim::sgd(0.1, 1), "rune::optim::sgd: momentum = 1 is outside [0, 1)");
  CHECK_THROWS_WITH(rune::optim::adam(0.1, 0.9, -0.5), "rune::optim::adam: b2 = -0.5 is outside [0, 1)");
  CHECK_THROWS_WITH(rune::optim::adam(INFINITY), "rune::optim::adam: learning_rate = inf is outside the finite numbers");
  auto opt = rune::optim::adam(0.1);
  const Params p = start();
  const Params wrong{test::f64({3}, {1, 2, 3}), nx::scalar(nx::float64, 1)};
  CHECK_THROWS_WITH(opt.update(wrong, opt.init(p), p),
                    "rune::optim::adam: w: shape [3] in the gradients, [2] in the parameters");
  CHECK_THROWS_WITH(rune::optim::sgd(0.1).update(p, rune::optim::sgd(0.1, 0.5).init(p), p),
                    "rune::optim::sgd: the state has a velocity, and the momentum is 0");
}
