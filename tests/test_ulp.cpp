// The accuracy of the transcendental functions: the largest error in ulps of
// each function against a more precise reference (long double for float64,
// double for float32) over sweeps of ordinary and extreme inputs. The bounds
// asserted here are the table of docs/accuracy.md.
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "helpers.hpp"
#include "ops/kernels/functors.hpp"

using nx::Tensor;

namespace {

template <class T> double ulps(T got, long double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  T rounded = T(want);  // may overflow to inf, as the exact result does in T
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : INFINITY;
  T step = std::nextafter(std::fabs(rounded), T(INFINITY)) - std::fabs(rounded);
  if (std::isinf(step)) step = std::fabs(rounded) - std::nextafter(std::fabs(rounded), T(0));
  return double(std::fabs((long double)got - want) / (long double)step);
}

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> f;
  std::function<long double(long double)> reference;
  double lo, hi;            // the ordinary sweep
  double bound64, bound32;  // ulps
};

// Inputs: an even sweep and a log-spaced one over [lo, hi], random points,
// and the extremes (zeros, tiny and huge values, subnormals, inf, nan).
template <class T> std::vector<T> inputs(double lo, double hi) {
  std::vector<T> v;
  const int n = 20000;
  for (int i = 0; i <= n; ++i) v.push_back(T(lo + (hi - lo) * i / n));
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int i = 0; i < n; ++i) v.push_back(T(u(rng)));
  for (double mag = 1e-30; mag < std::max(std::fabs(lo), std::fabs(hi)); mag *= 1.37) {
    if (mag >= lo && mag <= hi) v.push_back(T(mag));
    if (-mag >= lo && -mag <= hi) v.push_back(T(-mag));
  }
  for (T x : {T(0), T(-0.), std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(),
              std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), T(NAN)})
    v.push_back(x);
  return v;
}

template <class T> double worst(const Case& c, double bound) {
  std::vector<T> x = inputs<T>(c.lo, c.hi);
  Tensor t = nx::create(std::is_same_v<T, float> ? nx::float32 : nx::float64, {std::int64_t(x.size())},
                        std::span<const T>(x));
  std::vector<T> y = nx::to_vector<T>(c.f(t));
  double most = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    long double want = c.reference((long double)x[i]);
    if constexpr (std::is_same_v<T, float>) want = (long double)(double)want;
    double e = ulps<T>(y[i], want);
    if (e > most) {
      most = e;
      if (e > bound) std::printf("  %s(%.17g) = %.17g, want %.20Lg\n", c.name, double(x[i]), double(y[i]), want);
    }
  }
  return most;
}

std::vector<Case> cases() {
  return {
      {"exp", nx::exp, [](long double x) { return expl(x); }, -745, 709, 1, 2},
      {"exp2", nx::exp2, [](long double x) { return exp2l(x); }, -1074, 1023, 4, 4},
      {"expm1", nx::expm1, [](long double x) { return expm1l(x); }, -50, 709, 4, 4},
      {"log", nx::log, [](long double x) { return logl(x); }, 0, 1e300, 1, 1},
      {"log2", nx::log2, [](long double x) { return log2l(x); }, 0, 1e300, 4, 4},
      {"log1p", nx::log1p, [](long double x) { return log1pl(x); }, -1, 1e300, 4, 4},
      {"sqrt", nx::sqrt, [](long double x) { return sqrtl(x); }, 0, 1e300, 1, 1},
      {"sin", nx::sin, [](long double x) { return sinl(x); }, -1e5, 1e5, 1, 1},
      {"cos", nx::cos, [](long double x) { return cosl(x); }, -1e5, 1e5, 1, 1},
      {"sin", nx::sin, [](long double x) { return sinl(x); }, -1e30, 1e30, 1, 1},
      {"cos", nx::cos, [](long double x) { return cosl(x); }, -1e30, 1e30, 1, 1},
      {"tan", nx::tan, [](long double x) { return tanl(x); }, -1e30, 1e30, 1, 1},
      {"tan", nx::tan, [](long double x) { return tanl(x); }, -1e4, 1e4, 1, 1},
      {"tanh", nx::tanh, [](long double x) { return tanhl(x); }, -30, 30, 1, 4},
      {"sinh", nx::sinh, [](long double x) { return sinhl(x); }, -710, 710, 4, 4},
      {"cosh", nx::cosh, [](long double x) { return coshl(x); }, -710, 710, 4, 4},
      {"asin", nx::asin, [](long double x) { return asinl(x); }, -1, 1, 4, 4},
      {"acos", nx::acos, [](long double x) { return acosl(x); }, -1, 1, 4, 4},
      {"atan", nx::atan, [](long double x) { return atanl(x); }, -1e10, 1e10, 4, 4},
      {"erf", nx::erf, [](long double x) { return erfl(x); }, -6, 6, 4, 4},
  };
}

}  // namespace

TEST_CASE("float64 transcendentals are within their documented ulps") {
  for (const Case& c : cases()) {
    double e = worst<double>(c, c.bound64);
    std::printf("float64 %-6s max %.2f ulp (bound %g)\n", c.name, e, c.bound64);
    INFO(c.name);
    CHECK(e <= c.bound64);
  }
}

TEST_CASE("float32 transcendentals are within their documented ulps") {
  for (Case c : cases()) {
    if (c.hi > 1e30) c.hi = 1e30;  // float's range
    if (c.lo < -1e30) c.lo = -1e30;
    if (std::string(c.name).starts_with("exp") || c.name == std::string("sinh") || c.name == std::string("cosh")) {
      c.lo = std::max(c.lo, -104.), c.hi = std::min(c.hi, 89.);
      if (c.name == std::string("exp2")) c.lo = -149, c.hi = 127;
    }
    double e = worst<float>(c, c.bound32);
    std::printf("float32 %-6s max %.2f ulp (bound %g)\n", c.name, e, c.bound32);
    INFO(c.name);
    CHECK(e <= c.bound32);
  }
}

TEST_CASE("float64 exp(1) is e rounded to the nearest double") {
  const double e = 2.718281828459045;  // 0x1.5bf0a8b145769p+1
  CHECK(test::bits(nx::item(nx::exp(nx::scalar(nx::float64, 1.)))) == test::bits(e));
  CHECK(test::text(nx::exp(nx::scalar(nx::float64, 1.))) == "float64 [] 2.718281828459045");
  // the same in a batch, in a padded tail and through a strided view
  std::vector<double> ones(37, 1.);
  Tensor t = nx::create(nx::float64, {37}, std::span<const double>(ones));
  for (double y : test::values(nx::exp(t))) CHECK(test::bits(y) == test::bits(e));
  for (double y : test::values(nx::exp(nx::slice(t, {1}, {37}, {3})))) CHECK(test::bits(y) == test::bits(e));
}

// float64 exp, log, sin, cos, tan and tanh, and float32 sin, cos and tan,
// run the same code in the scalar loops and in every instruction set's
// batches (docs/accuracy.md): whatever level the test runs at (RUNE_SIMD),
// each element has the bits of the scalar code, wherever it sits (in a
// batch, beside larger or smaller arguments, in a padded tail, alone).
template <class T, nx::ops::Prim P> void same_bits_as_scalar(Tensor (*f)(nx::Operand), double lo, double hi) {
  const nx::DType d = std::is_same_v<T, float> ? nx::float32 : nx::float64;
  auto scalar = [](T x) { return nx::ops::kernels::Op<P>::scalar(x); };
  auto same = [](T a, T b) { return test::bits(double(a)) == test::bits(double(b)) || (a != a && b != b); };
  std::vector<T> x = inputs<T>(lo, hi);
  x.resize(x.size() / 16 * 16 + 5);  // a tail
  const Tensor t = nx::create(d, {std::int64_t(x.size())}, std::span<const T>(x));
  const std::vector<T> y = nx::to_vector<T>(f(t));
  std::size_t differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i) differ += !same(y[i], scalar(x[i]));
  CHECK(differ == 0);
  for (std::size_t i = 0; i < x.size(); i += 997) CHECK(same(nx::to_vector<T>(f(nx::scalar(d, double(x[i]))))[0], scalar(x[i])));
}

TEST_CASE("float64 exp, log, sin, cos, tan and tanh, float32 sin, cos and tan, give the bits of the scalar code") {
  using nx::ops::Prim;
  same_bits_as_scalar<double, Prim::exp>(nx::exp, -745, 709);
  same_bits_as_scalar<double, Prim::log>(nx::log, 0, 1e300);
  same_bits_as_scalar<double, Prim::sin>(nx::sin, -2e4, 2e4);
  same_bits_as_scalar<double, Prim::cos>(nx::cos, -2e4, 2e4);
  same_bits_as_scalar<double, Prim::tan>(nx::tan, -2e4, 2e4);
  same_bits_as_scalar<double, Prim::tanh>(nx::tanh, -30, 30);
  same_bits_as_scalar<float, Prim::sin>(nx::sin, -2e4, 2e4);
  same_bits_as_scalar<float, Prim::cos>(nx::cos, -2e4, 2e4);
  same_bits_as_scalar<float, Prim::tan>(nx::tan, -2e4, 2e4);
}

TEST_CASE("a float32 tan does not depend on its neighbours' arguments") {
  // xsimd's reduction, chosen by a whole batch, gave -3.187 one ulp apart.
  const Tensor alone = nx::tan(nx::scalar(nx::float32, -3.187));
  const Tensor beside = nx::tan(nx::create(nx::float32, {8}, {-3.187, 900., -7000., 1., 2., 3., 4., 5.}));
  CHECK(test::bits(nx::item(alone)) == test::bits(nx::item(beside, {0})));
}
