// Property tests enrolled from the primitive table: for every
// differentiable primitive, over shapes with broadcasting and two float
// dtypes, the gradient matches central differences, and jvp agrees with vjp
// (<J v, w> = <v, J^T w>).
#include <cmath>
#include <functional>
#include <random>

#include "helpers.hpp"
#include "primitive_cases.hpp"
#include "ops/primitive.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace nx::ops;
using test::Case;
using test::cases;
using test::uniform;

namespace {

// The differentiated operands of a case and a scalar objective over them:
// the primitive's result weighted by a fixed tensor, summed.
struct Objective {
  Case c;
  std::vector<std::size_t> inputs;  // which operands are differentiated
  Tensor weights;
  Tensor operator()(const std::vector<Tensor>& xs) const {
    std::vector<Tensor> ops = c.operands;
    for (std::size_t k = 0; k < inputs.size(); ++k) ops[inputs[k]] = xs[k];
    Tensor y = bind(c.prim, ops, c.params);
    return nx::sum(nx::cast(y, weights.dtype()) * weights);
  }
};

Objective objective(const Case& c, nx::DType dt) {
  Objective o{c, {}, {}};
  for (std::size_t i = 0; i < c.operands.size(); ++i)
    if (nx::is_floating(c.operands[i].dtype())) o.inputs.push_back(i);
  Tensor y = bind(c.prim, c.operands, c.params);
  std::mt19937 rng(11);
  o.weights = uniform(c.prim == Prim::convert ? nx::float64 : dt, y.shape(), -1, 1, rng);
  return o;
}

std::vector<Tensor> differentiated(const Objective& o) {
  std::vector<Tensor> xs;
  for (std::size_t i : o.inputs) xs.push_back(o.c.operands[i]);
  return xs;
}

void check_against_differences(const Objective& o, double eps, double tol) {
  std::vector<Tensor> xs = differentiated(o);
  std::vector<Tensor> g = rune::grad(o, xs);
  for (std::size_t k = 0; k < xs.size(); ++k) {
    std::vector<double> base = nx::to_vector<double>(xs[k]), analytic = nx::to_vector<double>(g[k]);
    for (std::size_t e = 0; e < base.size(); ++e) {
      auto at = [&](double delta) {
        std::vector<double> moved = base;
        moved[e] += delta;
        std::vector<Tensor> ys = xs;
        ys[k] = nx::create(xs[k].dtype(), xs[k].shape(), std::span<const double>(moved));
        return nx::item(o(ys));
      };
      const double numeric = (at(eps) - at(-eps)) / (2 * eps);
      INFO("operand " << k << " element " << e << ": numeric " << numeric << ", analytic " << analytic[e]);
      CHECK(std::fabs(numeric - analytic[e]) <= tol * std::max(1., std::fabs(numeric)));
    }
  }
}

void check_jvp_against_vjp(const Objective& o, double tol) {
  std::vector<Tensor> xs = differentiated(o);
  std::mt19937 rng(5);
  std::vector<Tensor> v;
  for (const Tensor& x : xs) v.push_back(uniform(x.dtype(), x.shape(), -1, 1, rng));
  auto f = [&](const std::vector<Tensor>& ys) {
    std::vector<Tensor> ops = o.c.operands;
    for (std::size_t k = 0; k < o.inputs.size(); ++k) ops[o.inputs[k]] = ys[k];
    return bind(o.c.prim, ops, o.c.params);
  };
  auto [y, jv] = rune::jvp(f, xs, v);
  auto [y2, pullback] = rune::vjp(f, xs);
  Tensor w = uniform(y.dtype(), y.shape(), -1, 1, rng);
  std::vector<Tensor> jtw = pullback(w);
  double left = nx::item(nx::sum(nx::cast(jv * w, nx::float64))), right = 0;
  for (std::size_t k = 0; k < v.size(); ++k) right += nx::item(nx::sum(nx::cast(v[k] * jtw[k], nx::float64)));
  CHECK(std::fabs(left - right) <= tol * std::max(1., std::fabs(left)));
}

}  // namespace

TEST_CASE("gradients of every differentiable primitive match central differences (float64)") {
  for (const Case& c : cases(nx::float64)) {
    INFO(info(c.prim).name);
    check_against_differences(objective(c, nx::float64), 1e-6, 1e-6);
  }
}

TEST_CASE("gradients of every differentiable primitive match central differences (float32)") {
  for (const Case& c : cases(nx::float32)) {
    INFO(info(c.prim).name);
    check_against_differences(objective(c, nx::float32), 1e-2, 2e-2);
  }
}

TEST_CASE("jvp agrees with vjp for every differentiable primitive") {
  for (const Case& c : cases(nx::float64)) {
    INFO(info(c.prim).name);
    check_jvp_against_vjp(objective(c, nx::float64), 1e-12);
  }
}

TEST_CASE("second derivatives through grad of grad match differences of gradients") {
  for (const Case& c : cases(nx::float64)) {
    const Family f = info(c.prim).family;
    if (f != Family::unary && f != Family::binary) continue;
    INFO(info(c.prim).name);
    Objective o = objective(c, nx::float64);
    std::vector<Tensor> xs = differentiated(o);
    // d/dx_0 of <grad f, u>: a Hessian-vector product, against differences of grad f.
    std::vector<Tensor> u;
    for (const Tensor& x : xs) u.push_back(nx::ones_like(x));
    auto directional = [&](const std::vector<Tensor>& ys) {
      std::vector<Tensor> g = rune::grad(o, ys);
      Tensor total = nx::sum(g[0] * u[0]);
      for (std::size_t k = 1; k < g.size(); ++k) total = total + nx::sum(g[k] * u[k]);
      return total;
    };
    std::vector<Tensor> h = rune::grad(directional, xs);
    const double eps = 1e-5;
    std::vector<double> base = nx::to_vector<double>(xs[0]), analytic = nx::to_vector<double>(h[0]);
    for (std::size_t e = 0; e < base.size(); ++e) {
      auto at = [&](double delta) {
        std::vector<double> moved = base;
        moved[e] += delta;
        std::vector<Tensor> ys = xs;
        ys[0] = nx::create(nx::float64, xs[0].shape(), std::span<const double>(moved));
        return nx::item(directional(ys));
      };
      const double numeric = (at(eps) - at(-eps)) / (2 * eps);
      INFO("element " << e << ": numeric " << numeric << ", analytic " << analytic[e]);
      CHECK(std::fabs(numeric - analytic[e]) <= 1e-5 * std::max(1., std::fabs(numeric)));
    }
  }
}

TEST_CASE("compiled equals eager bit for bit for every primitive of the table") {
  for (nx::DType dt : {nx::float64, nx::float32}) {
    for (const Case& c : cases(dt)) {
      INFO(info(c.prim).name << " " << nx::name(dt));
      auto apply = [&](const std::vector<Tensor>& ops) { return bind(c.prim, ops, c.params); };
      Tensor eager = apply(c.operands);
      Tensor compiled = rune::jit(apply)(c.operands);
      REQUIRE(compiled.shape() == eager.shape());
      std::vector<double> a = nx::to_vector<double>(eager), b = nx::to_vector<double>(compiled);
      for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::memcmp(&a[i], &b[i], sizeof(double)) == 0);
    }
  }
}
