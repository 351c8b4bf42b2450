// Differentiation semantics: grad runs f once per call and differentiates
// the path taken; nesting; structures in and out; conventions (+0, -0, ties,
// abs at 0); errors; staging under rune::program.
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

namespace {
Tensor v4() { return f64({4}, {1, 2, 3, 4}); }
struct Layer {
  Tensor w, b;
  int width = 2;
};
RUNE_TREE(Layer, w, b, width);
}  // namespace

TEST_CASE("grad runs the objective once per call, and reads primals") {
  int runs = 0;
  auto loss = [&](const Tensor& v) {
    ++runs;
    return nx::sum(v * v);
  };
  CHECK(text(rune::grad(loss, v4())) == "float64 [4] [2, 4, 6, 8]");
  CHECK(text(rune::grad(loss)(v4())) == "float64 [4] [2, 4, 6, 8]");
  CHECK(runs == 2);
  auto piecewise = [](const Tensor& v) { return nx::item(v) > 0. ? nx::sum(v * v) : nx::sum(-v); };
  CHECK(text(rune::grad(piecewise, nx::scalar(nx::float64, 3.))) == "float64 [] 6");
  CHECK(text(rune::grad(piecewise, nx::scalar(nx::float64, -2.))) == "float64 [] -1");
}

TEST_CASE("value_and_grad, value_and_grad_aux, vjp and jvp") {
  auto [value, g] = rune::value_and_grad([](const Tensor& v) { return nx::sum(nx::exp(v)); }, nx::zeros(nx::float64, {2}));
  CHECK(text(value) == "float64 [] 2");
  CHECK(text(g) == "float64 [2] [1, 1]");
  auto [v2, g2, aux] = rune::value_and_grad_aux(
      [](const Tensor& v) { return std::pair{nx::sum(v * v), std::pair{v * 3., 7}}; }, v4());
  CHECK(text(v2) == "float64 [] 30");
  CHECK(text(g2) == "float64 [4] [2, 4, 6, 8]");
  CHECK(text(aux.first) == "float64 [4] [3, 6, 9, 12]");
  CHECK_FALSE(aux.first.is_traced());
  CHECK(aux.second == 7);
  auto [y, pullback] = rune::vjp([](const Tensor& v) { return std::pair{v * 2., nx::sum(v)}; }, v4());
  CHECK(text(y.first) == "float64 [4] [2, 4, 6, 8]");
  CHECK(text(pullback(std::pair{nx::ones(nx::float64, {4}), nx::scalar(nx::float64, 10.)})) ==
        "float64 [4] [12, 12, 12, 12]");
  CHECK(text(pullback(std::pair{nx::zeros(nx::float64, {4}), nx::scalar(nx::float64, 1.)})) ==
        "float64 [4] [1, 1, 1, 1]");  // reusable
  auto [fy, ft] = rune::jvp([](const Tensor& v) { return v * v; }, v4(), nx::ones(nx::float64, {4}));
  CHECK(text(fy) == "float64 [4] [1, 4, 9, 16]");
  CHECK(text(ft) == "float64 [4] [2, 4, 6, 8]");
}

TEST_CASE("grad and value_and_grad with respect to some arguments: rune::grad<I...>") {
  const Tensor a = v4(), b = f64({4}, {2, 0, -1, 5});
  const Layer layer{f64({2}, {1, 2}), nx::scalar(nx::float64, 0.5), 2};
  auto f = [](const Tensor& x, double s, const Layer& l, const Tensor& y) {
    return nx::sum(x * y * s) + nx::sum(l.w * l.w) * l.b + nx::sum(x * x);
  };
  // The same gradients as the whole structure's, the other arguments held.
  auto whole = rune::grad([&](const std::tuple<Tensor, Layer, Tensor>& p) {
    return f(std::get<0>(p), 3., std::get<1>(p), std::get<2>(p));
  }, std::tuple{a, layer, b});
  auto [ga, gy] = rune::grad<0, 3>(f, a, 3., layer, b);
  CHECK(text(ga) == text(std::get<0>(whole)));
  CHECK(text(gy) == text(std::get<2>(whole)));
  const Layer gl = rune::grad<2>(f, a, 3., layer, b);  // one index: that argument's gradient
  CHECK(text(gl.w) == text(std::get<1>(whole).w));
  CHECK(text(gl.b) == text(std::get<1>(whole).b));
  CHECK(gl.width == 2);
  auto [gy_first, ga_second] = rune::grad<3, 0>(f)(a, 3., layer, b);  // the wrapping form, in the order given
  CHECK(text(gy_first) == text(gy));
  CHECK(text(ga_second) == text(ga));
  auto [value, g] = rune::value_and_grad<0>(f, a, 3., layer, b);
  CHECK(text(value) == text(f(a, 3., layer, b)));
  CHECK(text(g) == text(ga));
  // The arguments are read, never written.
  CHECK(text(a) == "float64 [4] [1, 2, 3, 4]");
  // Errors name the entry point.
  REQUIRE_THROWS_WITH(rune::grad<0>([](const Tensor& x, const Tensor&) { return x; }, a, b),
                      Catch::Contains("rune::grad:"));
}

TEST_CASE("pullbacks can be applied from several threads") {
  auto [y, pullback] = rune::vjp([](const Tensor& v) { return nx::sin(v) * v; }, v4());
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] { results[std::size_t(k)] = text(pullback(nx::full(nx::float64, {4}, double(k)))); });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 4; ++k) CHECK(results[std::size_t(k)] == text(pullback(nx::full(nx::float64, {4}, double(k)))));
}

TEST_CASE("structures in and out") {
  Layer layer{f64({2}, {1, 2}), nx::scalar(nx::float64, 0.5), 2};
  Layer g = rune::grad([](const Layer& l) { return nx::sum(l.w * l.w) * l.b; }, layer);
  CHECK(text(g.w) == "float64 [2] [1, 2]");
  CHECK(text(g.b) == "float64 [] 5");
  CHECK(g.width == 2);
  std::map<std::string, Tensor> m{{"a", v4()}, {"b", nx::scalar(nx::float64, 2.)}};
  auto gm = rune::grad([](const std::map<std::string, Tensor>& p) { return nx::sum(p.at("a")) * p.at("b"); }, m);
  CHECK(text(gm.at("a")) == "float64 [4] [2, 2, 2, 2]");
  CHECK(text(gm.at("b")) == "float64 [] 10");
  std::optional<Tensor> o = v4();
  CHECK(text(*rune::grad([](const std::optional<Tensor>& p) { return nx::sum(*p * 3.); }, o)) == "float64 [4] [3, 3, 3, 3]");
  std::vector<Tensor> vs{v4(), nx::create(nx::int32, {2}, {1, 2})};
  auto gv = rune::grad([](const std::vector<Tensor>& p) { return nx::sum(p[0] * nx::cast(nx::sum(p[1]), nx::float64)); }, vs);
  CHECK(text(gv[0]) == "float64 [4] [3, 3, 3, 3]");
  CHECK(text(gv[1]) == "int32 [2] [0, 0]");  // integer leaves get zeros
}

TEST_CASE("conventions: +0 for no contribution, no zero added, abs at 0, ties share") {
  auto unused = rune::grad([](const std::pair<Tensor, Tensor>& p) { return nx::sum(p.first); }, std::pair{v4(), v4()});
  CHECK(text(unused.second) == "float64 [4] [0, 0, 0, 0]");
  CHECK_FALSE(std::signbit(nx::item(unused.second, {0})));
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(v * v); }, nx::scalar(nx::float64, -0.))) == "float64 [] -0");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(nx::abs(v)); }, f64({3}, {-1, 0, 2}))) ==
        "float64 [3] [-1, 0, 1]");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::max(v); }, f64({3}, {2, 5, 5}))) == "float64 [3] [0, 0.5, 0.5]");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(nx::maximum(v, 1.)); }, f64({3}, {0, 1, 2}))) ==
        "float64 [3] [0, 0.5, 1]");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::prod(v); }, f64({3}, {2, 0, 3}))) == "float64 [3] [0, 6, 0]");
  // gradients are fresh C-order tensors
  Tensor g = rune::grad([](const Tensor& v) { return nx::sum(v); }, nx::ones(nx::float64, {2, 3}));
  CHECK(g.impl()->strides == nx::detail::Strides{3, 1});
}

TEST_CASE("derivatives at kinks and special points: pow at 0, maximum and max with NaN, sigmoid far out") {
  const double nan = std::nan("");
  // d/dx x^0 = 0 at x = 0 too (y x^(y-1) would be 0 * inf), and d/dy x^y = 0 at x = 0 (as JAX and PyTorch)
  auto pow_grads = [](double x, double y) {
    return rune::grad([](const std::pair<Tensor, Tensor>& p) { return nx::sum(nx::pow(p.first, p.second)); },
                      std::pair{nx::scalar(nx::float64, x), nx::scalar(nx::float64, y)});
  };
  auto [dx, dy] = pow_grads(0, 0);
  CHECK(text(dx) == "float64 [] 0");
  CHECK(text(dy) == "float64 [] 0");
  CHECK(text(pow_grads(0, 2).first) == "float64 [] 0");
  CHECK(text(pow_grads(0, 1).first) == "float64 [] 1");
  CHECK(text(pow_grads(3, 0).first) == "float64 [] 0");
  CHECK(text(pow_grads(2, 3).second) == text(nx::scalar(nx::float64, 8 * std::log(2.))));
  CHECK(text(rune::jvp([](const Tensor& x) { return nx::pow(x, 0.); }, nx::scalar(nx::float64, 0.),
                       nx::scalar(nx::float64, 1.)).second) == "float64 [] 0");
  // maximum and minimum: the derivative follows the operand whose value is the result, a NaN's
  auto both = [](auto f, double a, double b) {
    auto g = rune::grad([&](const std::pair<Tensor, Tensor>& p) { return nx::sum(f(p.first, p.second)); },
                        std::pair{nx::scalar(nx::float64, a), nx::scalar(nx::float64, b)});
    return text(g.first) + ", " + text(g.second);
  };
  auto maximum = [](const Tensor& a, const Tensor& b) { return nx::maximum(a, b); };
  auto minimum = [](const Tensor& a, const Tensor& b) { return nx::minimum(a, b); };
  CHECK(both(maximum, 1, nan) == "float64 [] 0, float64 [] 1");
  CHECK(both(maximum, nan, 1) == "float64 [] 1, float64 [] 0");
  CHECK(both(minimum, 1, nan) == "float64 [] 0, float64 [] 1");
  CHECK(both(minimum, nan, 1) == "float64 [] 1, float64 [] 0");
  CHECK(both(maximum, nan, nan) == "float64 [] 1, float64 [] 0");  // the result is a's
  CHECK(both(maximum, 2, 2) == "float64 [] 0.5, float64 [] 0.5");
  // max and min: the NaN elements share it
  CHECK(text(rune::grad([](const Tensor& v) { return nx::max(v); }, f64({4}, {1, nan, 3, nan}))) ==
        "float64 [4] [0, 0.5, 0, 0.5]");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::min(v); }, f64({3}, {1, nan, -3}))) == "float64 [3] [0, 1, 0]");
  // sigmoid's derivative s (1 - s) stays finite where exp(-x) overflows (PyTorch: 0 below -745)
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(nx::sigmoid(v)); },
                        f64({6}, {-1000, -800, -710, 0, 800, -std::numeric_limits<double>::infinity()}))) ==
        "float64 [6] [0, 0, 4.47628622567513e-309, 0.25, 0, 0]");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(nx::sigmoid(v)); },
                        nx::create(nx::float32, {2}, {-200, 200}))) == "float32 [2] [0, 0]");
  CHECK(rune::check_grads([](const Tensor& v) { return nx::sum(nx::sigmoid(v)); }, f64({3}, {-3, 0, 2}), 1e-6, 1e-6).ok);
}

TEST_CASE("abs of complex values has a real derivative: d|z| = Re(conj(sign z) dz)") {
  const Tensor c = nx::create(nx::complex128, {2}, std::vector<std::complex<double>>{{1, 2}, {-0.5, 0.25}});
  auto f = [&](const Tensor& v) { return nx::sum(nx::abs(nx::cast(v, nx::complex128) * c)); };
  const Tensor x = f64({2}, {0.5, -1.5});
  const Tensor g = rune::grad(f, x);  // sign(x) |c|
  CHECK(nx::item(g, {0}) == Approx(std::sqrt(5.)));
  CHECK(nx::item(g, {1}) == Approx(-std::sqrt(0.3125)));
  const Tensor t = rune::jvp(f, x, nx::ones_like(x)).second;
  CHECK(t.dtype() == nx::float64);
  CHECK(nx::item(t) == Approx(std::sqrt(5.) - std::sqrt(0.3125)));
}

TEST_CASE("detach stops derivatives") {
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(v * rune::detach(v)); }, v4())) ==
        "float64 [4] [1, 2, 3, 4]");
}

TEST_CASE("nested transformations differentiate their own values") {
  // d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x
  auto outer = [](const Tensor& x) {
    Tensor inner = rune::grad([&](const Tensor& y) { return nx::sum(x * y); }, nx::scalar(nx::float64, 3.));
    return nx::sum(x * inner);
  };
  CHECK(text(rune::grad(outer, nx::scalar(nx::float64, 5.))) == "float64 [] 10");
  // the inner gradient of a function of y alone is a constant of the outer
  auto constant_inner = [](const Tensor& x) {
    Tensor inner = rune::grad([](const Tensor& y) { return nx::sum(y * y); }, nx::scalar(nx::float64, 3.));
    return nx::sum(x * inner);
  };
  CHECK(text(rune::grad(constant_inner, nx::scalar(nx::float64, 5.))) == "float64 [] 6");
  CHECK(text(rune::hessian([](const Tensor& v) { return nx::sum(v * v * v); }, f64({2}, {1, 2}))) ==
        "float64 [2, 2] [[6, 0], [0, 12]]");
  CHECK(text(rune::jacfwd([](const Tensor& v) { return v * v; }, f64({2}, {1, 2}))) ==
        "float64 [2, 2] [[2, 0], [0, 4]]");
  CHECK(text(rune::jacrev([](const Tensor& v) { return nx::sum(v) * v; }, f64({2}, {1, 2}))) ==
        "float64 [2, 2] [[4, 1], [2, 5]]");
  // third order: d^3/dx^3 x^4 = 24 x
  auto d = [](auto f) { return [f](const Tensor& x) { return nx::sum(rune::grad(f, x)); }; };
  auto quartic = [](const Tensor& x) { return nx::sum(x * x * x * x); };
  CHECK(text(rune::grad(d(d(quartic)), nx::scalar(nx::float64, 2.))) == "float64 [] 48");
}

TEST_CASE("errors") {
  CHECK_THROWS_WITH(rune::grad([](const Tensor& v) { return v * 2.; }, f64({2}, {1, 2})),
                    "rune::grad: the objective must return a real or complex scalar, got float64 [2]");
  CHECK_THROWS_WITH(rune::grad([](const Tensor& v) { return nx::sum(nx::cast(v, nx::float64)); }, nx::ones(nx::int32, {2})),
                    "rune::grad: the parameters hold no real or complex tensor");
  auto [y, pullback] = rune::vjp([](const Tensor& v) { return std::vector<Tensor>{v, v}; }, v4());
  CHECK_THROWS_WITH(pullback(std::vector<Tensor>{v4()}), "rune::vjp: the root: length 2 in the result, length 1 in the cotangents");
  CHECK_THROWS_WITH(pullback(std::vector<Tensor>{v4(), nx::ones(nx::float32, {4})}),
                    "rune::vjp: 1: dtype float64 in the result, float32 in the cotangents");
  CHECK_THROWS_WITH(pullback(std::vector<Tensor>{v4(), nx::ones(nx::float64, {3})}),
                    "rune::vjp: 1: shape [4] in the result, [3] in the cotangents");
  CHECK_THROWS_WITH(rune::jvp([](const Tensor& v) { return v; }, v4(), nx::ones(nx::float64, {3})),
                    "rune::jvp: the root: shape [4] in the parameters, [3] in the tangents");
}

TEST_CASE("check_grads compares with central differences along two directions") {
  auto f = [](const Tensor& v) { return nx::sum(nx::sin(v) * v); };
  CHECK(rune::check_grads(f, v4()).ok);
  // a function whose "gradient" is wrong: a detached factor hides a term
  auto wrong = [](const Tensor& v) { return nx::sum(v * rune::detach(v)); };
  rune::GradCheck c = rune::check_grads(wrong, v4());
  CHECK_FALSE(c);
  CHECK_THAT(c.message, StartsWith("rune::check_grads: along direction 1, central differences give "));
}

TEST_CASE("under rune::program, both passes are recorded in one program") {
  rune::Program p = rune::program(
      [](const Tensor& x) { return rune::grad([](const Tensor& w) { return nx::sum(nx::sin(w) * w); }, x); }, v4());
  Tensor g = rune::run(p, {v4()})[0];
  Tensor eager = rune::grad([](const Tensor& w) { return nx::sum(nx::sin(w) * w); }, v4());
  CHECK(text(g) == text(eager));
  CHECK(rune::to_string(p).find("cos") != std::string::npos);
}

TEST_CASE("custom_jvp: forward mode applies the tangent map, reverse mode transposes it, second order differentiates it") {
  int rule_runs = 0;
  auto softplus = rune::custom_jvp([&](const Tensor& x) {
    ++rule_runs;
    Tensor y = nx::log1p(nx::exp(x));
    return std::pair{y, [x](const Tensor& t) { return t * nx::sigmoid(x); }};
  });
  Tensor x = f64({3}, {-1000, 0, 1000});
  CHECK(nx::item(softplus(x), {0}) == 0);
  CHECK(nx::item(softplus(x), {1}) == Approx(std::log(2.)));
  CHECK(std::isinf(nx::item(softplus(x), {2})));
  // the rule's derivative, not the derivative of its code (which is nan at 1000)
  CHECK(text(rune::grad([&](const Tensor& v) { return nx::sum(softplus(v)); }, x)) == "float64 [3] [0, 0.5, 1]");
  CHECK(text(rune::jvp(softplus, x, nx::ones_like(x)).second) == "float64 [3] [0, 0.5, 1]");
  CHECK(text(rune::hessian([&](const Tensor& v) { return nx::sum(softplus(v)); }, f64({1}, {0}))) ==
        "float64 [1, 1] [[0.25]]");
  rule_runs = 0;
  (void)rune::grad([&](const Tensor& v) { return nx::sum(softplus(v)); }, x);
  CHECK(rule_runs == 1);
}

TEST_CASE("custom_vjp: reverse mode calls the pullback; forward mode is an error") {
  int pullbacks = 0;
  auto cube = rune::custom_vjp([&](const Tensor& v) {
    return std::pair{v * v * v, [&pullbacks, v](const Tensor& ct) {
                       ++pullbacks;
                       return ct * v * v * 3.;
                     }};
  });
  Tensor x = f64({3}, {-1, 0, 2});
  CHECK(text(cube(x)) == "float64 [3] [-1, 0, 8]");
  CHECK(text(rune::grad([&](const Tensor& v) { return nx::sum(cube(v) * 2.); }, x)) == "float64 [3] [6, 0, 24]");
  CHECK(pullbacks == 1);
  auto [y, pullback] = rune::vjp(cube, x);
  CHECK(text(pullback(nx::ones_like(x))) == "float64 [3] [3, 0, 12]");
  CHECK(text(pullback(nx::ones_like(x) * 2.)) == "float64 [3] [6, 0, 24]");
  CHECK_THROWS_WITH(rune::jvp(cube, x, x),
                    "rune::jvp: a custom_vjp rule has no forward derivative; give the function a custom_jvp rule");
}

TEST_CASE("an error in a custom rule, its tangent map or its pullback says where the rule was given") {
  const Tensor x = f64({2}, {1, 2});
  const Tensor three = nx::ones(nx::float64, {3});
  // (the failing call and the construct are written on one line)
  auto broadcast = [](int line) {
    return "nx::add: shapes [2] and [3] do not broadcast (at test_grad.cpp:" + std::to_string(line) + ", in ";
  };
  const int rule_line = __LINE__ + 1;
  auto bad_rule = rune::custom_jvp([&](const Tensor& v) { return std::pair{v + three, [](const Tensor& t) { return t; }}; });
  const std::string rule_at = "the rule of rune::custom_jvp called at test_grad.cpp:" + std::to_string(rule_line);
  CHECK_THROWS_WITH(bad_rule(x), broadcast(rule_line) + rule_at + ")");
  CHECK_THROWS_WITH(rune::jit(bad_rule)(x), broadcast(rule_line) + rule_at + ", under rune::jit)");

  const int map_line = __LINE__ + 1;
  auto bad_map = rune::custom_jvp([&](const Tensor& v) { return std::pair{v * 2., [&](const Tensor& t) { return t + three; }}; });
  CHECK_THROWS_WITH(rune::jvp(bad_map, x, x), broadcast(map_line) + "the tangent map of rune::custom_jvp called at test_grad.cpp:" +
                                                  std::to_string(map_line) + ", under rune::jvp)");

  const int pullback_line = __LINE__ + 1;
  auto bad_pullback = rune::custom_vjp([&](const Tensor& v) { return std::pair{v * 2., [&](const Tensor& ct) { return ct + three; }}; });
  CHECK_THROWS_WITH(rune::grad([&](const Tensor& v) { return nx::sum(bad_pullback(v)); }, x),
                    broadcast(pullback_line) + "the pullback of rune::custom_vjp called at test_grad.cpp:" + std::to_string(pullback_line) +
                        ", under rune::grad)");
  CHECK_THROWS_AS(bad_pullback(x + three), std::invalid_argument);  // (the caller's own error: not the rule's)
}

namespace {
auto running_product(const Tensor& v) {
  return rune::scan(
      [](const Tensor& acc, const Tensor& row) {
        Tensor next = acc * row;
        return std::pair{next, next};
      },
      nx::scalar(nx::float64, 1.), v);
}
}  // namespace

TEST_CASE("differentiating scan: reverse, forward, captures, structures, second order") {
  Tensor xs = v4();
  CHECK(text(rune::grad([](const Tensor& v) { return running_product(v).first; }, xs)) == "float64 [4] [24, 12, 8, 6]");
  CHECK(text(rune::grad([](const Tensor& v) { return nx::sum(running_product(v).second); }, xs)) ==
        "float64 [4] [33, 16, 10, 6]");
  CHECK(text(rune::jvp([](const Tensor& v) { return running_product(v).first; }, xs, nx::ones_like(xs)).second) ==
        "float64 [] 50");
  // a captured parameter and a structured carry
  auto rollout = [&](const std::pair<Tensor, Tensor>& p) {
    auto [state, trail] = rune::scan(
        [&](const std::pair<Tensor, Tensor>& c, const Tensor& row) {
          Tensor v = c.second + (row - c.first) * p.first;
          return std::pair{std::pair{c.first + v * p.second, v}, nx::sin(c.first)};
        },
        std::pair{nx::scalar(nx::float64, 0.), nx::scalar(nx::float64, 0.)}, xs);
    return nx::sum(trail) + state.first * state.second;
  };
  std::pair<Tensor, Tensor> params{nx::scalar(nx::float64, 0.3), nx::scalar(nx::float64, 0.5)};
  CHECK(rune::check_grads(rollout, params, 1e-6, 1e-6).ok);
  auto sines = [](const Tensor& v) {
    return rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{nx::sin(c + row), std::tuple<>{}}; },
                      nx::scalar(nx::float64, 0.5), v)
        .first;
  };
  CHECK(rune::check_grads(sines, xs, 1e-6, 1e-6).ok);
  Tensor h = rune::hessian(sines, xs);
  CHECK(nx::item(h, {0, 1}) == Approx(nx::item(h, {1, 0})).epsilon(1e-12));
  Tensor fd = (rune::grad(sines, xs + f64({4}, {1e-6, 0, 0, 0})) - rune::grad(sines, xs - f64({4}, {1e-6, 0, 0, 0}))) / 2e-6;
  for (int j = 0; j < 4; ++j) CHECK(nx::item(h, {0, j}) == Approx(nx::item(fd, {j})).epsilon(1e-5));
  // under rune::program, the forward scan and the reversed linear scan are recorded
  rune::Program p = rune::program([&](const Tensor& v) { return rune::grad(sines, v); }, xs);
  CHECK(text(rune::run(p, {xs})[0]) == text(rune::grad(sines, xs)));
}
