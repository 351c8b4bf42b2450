// Elementwise functions: values, broadcasting, double operands, dtype rules,
// integer semantics, and errors.
#include <cmath>
#include <limits>

#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

TEST_CASE("binary operators and functions with tensors and doubles on either side") {
  Tensor a = f64({3}, {1, 2, 3});
  CHECK(values(a + a) == std::vector<double>{2, 4, 6});
  CHECK(values(a - 1.) == std::vector<double>{0, 1, 2});
  CHECK(values(10. - a) == std::vector<double>{9, 8, 7});
  CHECK(values(a * 2.) == std::vector<double>{2, 4, 6});
  CHECK(values(2. * a) == std::vector<double>{2, 4, 6});
  CHECK(values(a / 2.) == std::vector<double>{0.5, 1, 1.5});
  CHECK(values(6. / a) == std::vector<double>{6, 3, 2});
  CHECK(values(-a) == std::vector<double>{-1, -2, -3});
  CHECK(values(nx::pow(a, 2.)) == std::vector<double>{1, 4, 9});
  CHECK(values(nx::pow(2., a)) == std::vector<double>{2, 4, 8});
  CHECK(values(nx::maximum(a, 2.)) == std::vector<double>{2, 2, 3});
  CHECK(values(nx::minimum(2., a)) == std::vector<double>{1, 2, 2});
  CHECK(values(nx::mod(f64({4}, {5, -5, 5.5, -5.5}), 3.)) == std::vector<double>{2, -2, 2.5, -2.5});
  CHECK(nx::item(nx::atan2(nx::scalar(nx::float64, 1), nx::scalar(nx::float64, 1))) == Approx(M_PI / 4));
}

TEST_CASE("+ - * / with a double give the bits, dtype and shape of the double made a tensor") {
  // (a small C-order float tensor takes a direct path: nx/api_elementwise.cpp)
  const double doubles[] = {0.1, -3., 1e300, std::numeric_limits<double>::quiet_NaN(), -0.};
  for (nx::DType dtype : {nx::float64, nx::float32, nx::float16}) {
    const Tensor flat = nx::cast(nx::linspace(nx::float64, -2., 2., 7), dtype);
    const Tensor strided = nx::slice(nx::cast(nx::linspace(nx::float64, -2., 2., 14), dtype), {0}, {14}, {2});
    const Tensor single = nx::cast(nx::scalar(nx::float64, 0.3), dtype);
    for (const Tensor& t : {flat, strided, single, nx::reshape(flat, {7, 1})})
      for (double v : doubles) {
        INFO(nx::to_string(t) << " and " << v);
        const Tensor d = nx::scalar(dtype, v);
        CHECK(same_bits(t + v, nx::add(t, d)));
        CHECK(same_bits(v + t, nx::add(d, t)));
        CHECK(same_bits(t - v, nx::sub(t, d)));
        CHECK(same_bits(v - t, nx::sub(d, t)));
        CHECK(same_bits(t * v, nx::mul(t, d)));
        CHECK(same_bits(v * t, nx::mul(d, t)));
        CHECK(same_bits(t / v, nx::div(t, d)));
        CHECK(same_bits(v / t, nx::div(d, t)));
      }
    const Tensor sum = flat + 1.;
    CHECK(sum.impl()->storage.get() != flat.impl()->storage.get());
  }
}

TEST_CASE("broadcasting follows NumPy") {
  Tensor col = f64({2, 1}, {10, 20});
  Tensor row = f64({3}, {1, 2, 3});
  Tensor sum = col + row;
  CHECK(sum.shape() == nx::Shape{2, 3});
  CHECK(values(sum) == std::vector<double>{11, 12, 13, 21, 22, 23});
  CHECK((nx::zeros(nx::float64, {4, 1, 3}) + nx::ones(nx::float64, {2, 1})).shape() == nx::Shape{4, 2, 3});
  CHECK((nx::zeros(nx::float64, {0, 3}) + row).shape() == nx::Shape{0, 3});
  CHECK_THROWS_WITH(nx::add(nx::zeros(nx::float64, {2, 3}), nx::zeros(nx::float64, {4})),
                    test::Placed("nx::add: shapes [2, 3] and [4] do not broadcast"));
  CHECK_THROWS_WITH(nx::ones(nx::float64, {3}) * nx::ones(nx::float64, {4}),
                    test::Placed("nx::mul: shapes [3] and [4] do not broadcast"));
}

TEST_CASE("operands must share a dtype; a bool tensor is refused by arithmetic") {
  CHECK_THROWS_WITH(nx::ones(nx::float32, {2}) + nx::ones(nx::float64, {2}),
                    test::Placed("nx::add: dtypes float32 and float64 differ (convert one with nx::cast)"));
  CHECK_THROWS_WITH(nx::exp(nx::ones(nx::bool_, {3})),
                    test::Placed("nx::exp: bool [3] is not supported (it takes float or complex tensors)"));
  CHECK_THROWS_WITH(nx::sin(nx::ones(nx::int32, {2})), StartsWith("nx::sin: int32 [2] is not supported"));
  CHECK_THROWS_WITH(nx::ones(nx::bool_, {2}) + 1., StartsWith("nx::add: bool [2] is not supported"));
  CHECK_THROWS_WITH(1. - nx::ones(nx::bool_, {2}), StartsWith("nx::sub: bool [2] is not supported"));
  CHECK_THROWS_WITH(nx::mod(nx::ones(nx::complex64, {1}), 1.), StartsWith("nx::mod: complex64 [1]"));
  // a double operand takes the tensor's dtype
  CHECK((nx::ones(nx::float32, {2}) + 0.5).dtype() == nx::float32);
  CHECK(text(nx::ones(nx::int32, {2}) * 2.7) == "int32 [2] [2, 2]");
}

TEST_CASE("unary functions") {
  Tensor x = f64({3}, {-1.5, 0, 2.25});
  CHECK(values(nx::abs(x)) == std::vector<double>{1.5, 0, 2.25});
  CHECK(values(nx::sign(x)) == std::vector<double>{-1, 0, 1});
  CHECK(values(nx::square(x)) == std::vector<double>{2.25, 0, 5.0625});
  CHECK(values(nx::sqrt(f64({2}, {4, 2.25}))) == std::vector<double>{2, 1.5});
  CHECK(values(nx::rsqrt(f64({2}, {4, 0.25}))) == std::vector<double>{0.5, 2});
  CHECK(values(nx::recip(f64({2}, {4, -0.5}))) == std::vector<double>{0.25, -2});
  CHECK(values(nx::floor(x)) == std::vector<double>{-2, 0, 2});
  CHECK(values(nx::ceil(x)) == std::vector<double>{-1, 0, 3});
  CHECK(values(nx::round(f64({4}, {0.5, 1.5, 2.5, -0.5}))) == std::vector<double>{0, 2, 2, -0.});
  CHECK(nx::item(nx::exp(nx::scalar(nx::float64, 0))) == 1);
  CHECK(nx::item(nx::log(nx::scalar(nx::float64, 1))) == 0);
  CHECK(nx::item(nx::exp2(nx::scalar(nx::float64, 10))) == 1024);
  CHECK(nx::item(nx::log2(nx::scalar(nx::float64, 1024))) == 10);
  CHECK(nx::item(nx::log1p(nx::scalar(nx::float64, 1e-20))) == 1e-20);
  CHECK(nx::item(nx::expm1(nx::scalar(nx::float64, 1e-20))) == 1e-20);
  CHECK(nx::item(nx::sigmoid(nx::scalar(nx::float64, 0))) == 0.5);
  CHECK(nx::item(nx::sigmoid(nx::scalar(nx::float64, -1000))) == 0);
  CHECK(nx::item(nx::sigmoid(nx::scalar(nx::float64, 1000))) == 1);
  for (double v : {-0.7, 0.3}) {
    Tensor s = nx::scalar(nx::float64, v);
    CHECK(nx::item(nx::sin(s)) == Approx(std::sin(v)));
    CHECK(nx::item(nx::cos(s)) == Approx(std::cos(v)));
    CHECK(nx::item(nx::tan(s)) == Approx(std::tan(v)));
    CHECK(nx::item(nx::tanh(s)) == Approx(std::tanh(v)));
    CHECK(nx::item(nx::sinh(s)) == Approx(std::sinh(v)));
    CHECK(nx::item(nx::cosh(s)) == Approx(std::cosh(v)));
    CHECK(nx::item(nx::asin(s)) == Approx(std::asin(v)));
    CHECK(nx::item(nx::acos(s)) == Approx(std::acos(v)));
    CHECK(nx::item(nx::atan(s)) == Approx(std::atan(v)));
    CHECK(nx::item(nx::erf(s)) == Approx(std::erf(v)));
  }
}

TEST_CASE("predicates and comparisons give bool tensors") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor x = f64({4}, {1, inf, nan, -inf});
  CHECK(text(nx::isnan(x)) == "bool [4] [false, false, true, false]");
  CHECK(text(nx::isinf(x)) == "bool [4] [false, true, false, true]");
  CHECK(text(nx::isfinite(x)) == "bool [4] [true, false, false, false]");
  CHECK(text(nx::isfinite(nx::ones(nx::int32, {1}))) == "bool [1] [true]");
  Tensor a = f64({3}, {1, 2, 3});
  CHECK(text(nx::less(a, 2.)) == "bool [3] [true, false, false]");
  CHECK(text(nx::less_equal(a, 2.)) == "bool [3] [true, true, false]");
  CHECK(text(nx::greater(a, 2.)) == "bool [3] [false, false, true]");
  CHECK(text(nx::greater_equal(a, 2.)) == "bool [3] [false, true, true]");
  CHECK(text(nx::equal(a, 2.)) == "bool [3] [false, true, false]");
  CHECK(text(nx::not_equal(a, 2.)) == "bool [3] [true, false, true]");
  Tensor p = nx::create(nx::bool_, {4}, {0, 0, 1, 1}), q = nx::create(nx::bool_, {4}, {0, 1, 0, 1});
  CHECK(text(nx::logical_and(p, q)) == "bool [4] [false, false, false, true]");
  CHECK(text(nx::logical_or(p, q)) == "bool [4] [false, true, true, true]");
  CHECK(text(nx::logical_xor(p, q)) == "bool [4] [false, true, true, false]");
  CHECK(text(nx::logical_not(p)) == "bool [4] [true, true, false, false]");
}

TEST_CASE("maximum and minimum propagate NaN") {
  const double nan = std::nan("");
  CHECK(std::isnan(nx::item(nx::maximum(nx::scalar(nx::float64, nan), 1.))));
  CHECK(std::isnan(nx::item(nx::maximum(1., nx::scalar(nx::float64, nan)))));
  CHECK(std::isnan(nx::item(nx::minimum(nx::scalar(nx::float32, nan), 1.))));
}

namespace {
// Equal values with equal signs (of zeros), or both NaN.
bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && (a[i] != b[i] || std::signbit(a[i]) != std::signbit(b[i])))
      return false;
  return true;
}

// `values` repeated to n elements: rows of every length meet the scalar
// loops, whole SIMD batches (4 to 16 elements) and their tails.
std::vector<double> repeated(const std::vector<double>& values, std::size_t n) {
  std::vector<double> out;
  while (out.size() < n) out.insert(out.end(), values.begin(), values.end());
  out.resize(n);
  return out;
}

// f in the element type that nx computes `dtype` in (16-bit floats in float),
// as the dtype holds it.
double in_dtype(nx::DType dtype, double (*f64)(double, double), float (*f32)(float, float), double a, double b) {
  if (dtype == nx::float64) return f64(a, b);
  return nx::item(nx::scalar(dtype, double(f32(float(a), float(b)))));
}
}  // namespace

TEST_CASE("atan2 gives C's values at signed zeros and infinities, at every length, compiled too") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> specials{0., -0., inf, -inf, 1., -1., std::nan("")};
  std::vector<double> ys, xs;
  for (double y : specials)
    for (double x : specials) ys.push_back(y), xs.push_back(x);
  for (nx::DType dtype : {nx::float64, nx::float32, nx::float16, nx::bfloat16})
    for (std::size_t n : {1, 7, 8, 16, 17, 49, 100}) {
      INFO(nx::name(dtype) << ", " << n << " elements");
      auto compiled = rune::jit([](const Tensor& y, const Tensor& x) { return nx::atan2(y, x); });
      const std::vector<double> y = repeated(ys, n), x = repeated(xs, n);
      std::vector<double> expected;
      for (std::size_t i = 0; i < n; ++i)
        expected.push_back(in_dtype(dtype, [](double a, double b) { return std::atan2(a, b); },
                                    [](float a, float b) { return std::atan2(a, b); }, y[i], x[i]));
      const Tensor ty = nx::create(dtype, {std::int64_t(n)}, y), tx = nx::create(dtype, {std::int64_t(n)}, x);
      CHECK(same_values(values(nx::atan2(ty, tx)), expected));
      CHECK(same_bits(compiled(ty, tx), nx::atan2(ty, tx)));
    }
  // C99 F.9.1.4: the quadrant's angle, with the signs of the zeros.
  CHECK(text(nx::atan2(f64({4}, {0., -0., 0., -0.}), f64({4}, {0., 0., -0., -0.}))) ==
        "float64 [4] [0, -0, 3.141592653589793, -3.141592653589793]");
  CHECK(text(nx::atan2(f64({4}, {inf, inf, -inf, -inf}), f64({4}, {inf, -inf, inf, -inf}))) ==
        "float64 [4] [0.7853981633974483, 2.356194490192345, -0.7853981633974483, -2.356194490192345]");
}

TEST_CASE("signs of zero: odd functions keep -0, rounding keeps the sign, on every length, compiled too") {
  using Function = Tensor (*)(nx::Operand);
  struct Case {
    const char* name;
    Function f;
    double (*c)(double);
    std::vector<double> inputs;  // whose results every dtype holds exactly
  };
  const std::vector<double> zeros{0., -0.}, halves{0., -0., 0.5, -0.5, 0.375, -0.375, 1.5, -1.5, -2.5};
  const std::vector<Case> cases{
      {"neg", nx::neg, [](double x) { return -x; }, halves},
      {"abs", nx::abs, [](double x) { return std::fabs(x); }, halves},
      {"sign", nx::sign, [](double x) { return x > 0 ? 1. : x < 0 ? -1. : x; }, halves},
      {"floor", nx::floor, [](double x) { return std::floor(x); }, halves},
      {"ceil", nx::ceil, [](double x) { return std::ceil(x); }, halves},
      {"round", nx::round, [](double x) { return std::nearbyint(x); }, halves},
      {"sqrt", nx::sqrt, [](double x) { return std::sqrt(x); }, zeros},
      {"rsqrt", nx::rsqrt, [](double x) { return 1 / std::sqrt(x); }, zeros},
      {"recip", nx::recip, [](double x) { return 1 / x; }, zeros},
      {"square", nx::square, [](double x) { return x * x; }, zeros},
      {"sin", nx::sin, [](double x) { return std::sin(x); }, zeros},
      {"tan", nx::tan, [](double x) { return std::tan(x); }, zeros},
      {"sinh", nx::sinh, [](double x) { return std::sinh(x); }, zeros},
      {"tanh", nx::tanh, [](double x) { return std::tanh(x); }, zeros},
      {"asin", nx::asin, [](double x) { return std::asin(x); }, zeros},
      {"atan", nx::atan, [](double x) { return std::atan(x); }, zeros},
      {"erf", nx::erf, [](double x) { return std::erf(x); }, zeros},
      {"expm1", nx::expm1, [](double x) { return std::expm1(x); }, zeros},
      {"log1p", nx::log1p, [](double x) { return std::log1p(x); }, zeros},
      {"log", nx::log, [](double x) { return std::log(x); }, zeros},
      {"exp", nx::exp, [](double x) { return std::exp(x); }, zeros},
      {"cos", nx::cos, [](double x) { return std::cos(x); }, zeros},
      {"cosh", nx::cosh, [](double x) { return std::cosh(x); }, zeros},
      {"sigmoid", nx::sigmoid, [](double) { return 0.5; }, zeros},
  };
  for (const Case& c : cases)
    for (nx::DType dtype : {nx::float64, nx::float32, nx::float16, nx::bfloat16})
      for (std::size_t n : {1, 3, 8, 9, 16, 17, 33}) {
        INFO("nx::" << c.name << ", " << nx::name(dtype) << ", " << n << " elements");
        auto compiled = rune::jit([&](const Tensor& x) { return c.f(x); });
        const std::vector<double> x = repeated(c.inputs, n);
        std::vector<double> expected;
        for (double v : x) expected.push_back(c.c(v));
        const Tensor t = nx::create(dtype, {std::int64_t(n)}, x);
        CHECK(same_values(values(c.f(t)), expected));
        CHECK(same_bits(compiled(t), c.f(t)));
      }
}

TEST_CASE("where selects with broadcasting; clamp bounds") {
  Tensor c = nx::create(nx::bool_, {3}, {1, 0, 1});
  CHECK(values(nx::where(c, f64({3}, {1, 2, 3}), 0.)) == std::vector<double>{1, 0, 3});
  CHECK(values(nx::where(c, -1., f64({1}, {9}))) == std::vector<double>{-1, 9, -1});
  CHECK_THROWS_WITH(nx::where(f64({3}, {1, 0, 1}), f64({3}, {1, 2, 3}), 0.),
                    test::Placed("nx::where: the condition must be a bool tensor, got float64 [3]"));
  CHECK(values(nx::clamp(f64({3}, {-5, 0.5, 5}), 0., 1.)) == std::vector<double>{0, 0.5, 1});
}

TEST_CASE("where gives the chosen elements at every element size, with operands in a row, one element or strided") {
  // (elements of 1, 2, 4 and 8 bytes are chosen by a mask in a loop without
  // strides where it can be; 16 bytes element by element)
  const std::int64_t n = 37;  // (a tail after whole vectors)
  std::vector<double> cv, av, bv;
  for (std::int64_t i = 0; i < n; ++i) {
    cv.push_back(double((i * 7) % 3 == 0));
    av.push_back(double(i) - 20.5);
    bv.push_back(100. + double(i));
  }
  const Tensor c = nx::cast(nx::create(nx::float64, {n}, cv), nx::bool_);
  for (nx::DType dtype : {nx::int8, nx::int16, nx::float32, nx::float64, nx::complex128}) {
    INFO(nx::name(dtype));
    const Tensor a = nx::cast(nx::create(nx::float64, {n}, av), dtype);
    const Tensor b = nx::cast(nx::create(nx::float64, {n}, bv), dtype);
    const Tensor a1 = nx::slice(a, {3}, {4}), b1 = nx::slice(b, {5}, {6});  // one element, broadcast
    // strided: every other element of twice as many
    const Tensor a2 = nx::slice(nx::concatenate({a, a}, 0), {0}, {2 * n}, {2});
    auto expected = [&](const Tensor& x, const Tensor& y) {
      const std::vector<double> xs = values(nx::cast(nx::broadcast_to(x, {n}), nx::float64)),
                                ys = values(nx::cast(nx::broadcast_to(y, {n}), nx::float64));
      std::vector<double> out;
      for (std::int64_t i = 0; i < n; ++i) out.push_back(cv[std::size_t(i)] != 0 ? xs[std::size_t(i)] : ys[std::size_t(i)]);
      return out;
    };
    for (const auto& [x, y] : {std::pair{a, b}, std::pair{a1, b}, std::pair{a, b1}, std::pair{a1, b1}, std::pair{a2, b}}) {
      const Tensor got = nx::where(c, x, y);
      CHECK(got.dtype() == dtype);
      CHECK(values(nx::cast(got, nx::float64)) == expected(x, y));
    }
  }
}

TEST_CASE("cast converts between every pair of dtypes") {
  Tensor x = f64({4}, {-1.5, 0, 2.7, 300});
  CHECK(text(nx::cast(x, nx::int32)) == "int32 [4] [-1, 0, 2, 300]");
  CHECK(text(nx::cast(x, nx::uint8)) == "uint8 [4] [0, 0, 2, 255]");  // saturating
  CHECK(text(nx::cast(x, nx::bool_)) == "bool [4] [true, false, true, true]");
  CHECK(text(nx::cast(nx::scalar(nx::float64, std::nan("")), nx::int64)) == "int64 [] 0");
  CHECK(text(nx::cast(x, nx::float16)) == "float16 [4] [-1.5, 0, 2.7, 300]");
  CHECK(text(nx::cast(nx::cast(x, nx::complex64), nx::float64)) == "float64 [4] [-1.5, 0, 2.700000047683716, 300]");
  for (int from = 0; from < nx::dtype_count; ++from)
    for (int to = 0; to < nx::dtype_count; ++to) {
      Tensor v = nx::cast(nx::create(nx::DType(from), {2}, {1, 0}), nx::DType(to));
      CHECK(v.dtype() == nx::DType(to));
      CHECK(values(v) == std::vector<double>{1, 0});
    }
}

TEST_CASE("integer arithmetic wraps and never traps") {
  const double min32 = std::numeric_limits<std::int32_t>::min();
  Tensor m = nx::create(nx::int32, {1}, {min32});
  CHECK(values(m - 1.) == std::vector<double>{2147483647});
  CHECK(values(nx::div(m, -1.)) == std::vector<double>{min32});
  CHECK(values(nx::mod(m, -1.)) == std::vector<double>{0});
  CHECK(values(nx::div(nx::create(nx::int32, {3}, {7, -7, 7}), nx::create(nx::int32, {3}, {2, 2, 0}))) ==
        std::vector<double>{3, -3, 0});
  CHECK(values(nx::mod(nx::create(nx::int64, {3}, {7, -7, 7}), nx::create(nx::int64, {3}, {3, 3, 0}))) ==
        std::vector<double>{1, -1, 0});
  CHECK(values(nx::pow(nx::create(nx::int32, {4}, {2, -1, 1, 3}), nx::create(nx::int32, {4}, {10, -3, -5, -1}))) ==
        std::vector<double>{1024, -1, 1, 0});
  CHECK(values(nx::abs(nx::create(nx::int8, {2}, {-128, -3}))) == std::vector<double>{-128, 3});
  CHECK(values(nx::neg(nx::create(nx::uint8, {1}, {1}))) == std::vector<double>{255});
}

TEST_CASE("float16 and bfloat16 compute in float and round") {
  Tensor h = nx::create(nx::float16, {2}, {1, 2048});
  CHECK(text(h + 1.) == "float16 [2] [2, 2048]");  // 2049 is not a float16
  CHECK(text(nx::create(nx::bfloat16, {1}, {256}) + 1.) == "bfloat16 [1] [256]");
  CHECK(text(nx::sqrt(nx::create(nx::float16, {1}, {2}))) == "float16 [1] [1.414]");
}

TEST_CASE("complex powers follow NumPy at zero and for whole exponents; 1 / 0 is infinite (C99 Annex G)") {
  using C = std::complex<double>;
  const Tensor a = nx::create(nx::complex128, {8}, std::vector<C>{{1, 1}, {1, 2}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {2, 0}, {1, 1}});
  const Tensor b = nx::create(nx::complex128, {8}, std::vector<C>{{-2, 0}, {3, 0}, {0, 0}, {2, 0}, {-1, 0}, {0, 1}, {0.5, 0}, {2, 0}});
  // (np.power: 0^0 = 1, 0^2 = 0, 0^-1 and 0^1j NaN; whole exponents by repeated products, exact here)
  CHECK(text(nx::slice(nx::pow(a, b), {0}, {6})) == "complex128 [6] [0-0.5j, -11-2j, 1+0j, 0+0j, nan+nanj, nan+nanj]");
  CHECK(text(nx::slice(nx::pow(a, b), {7}, {8})) == "complex128 [1] [0+2j]");
  CHECK(nx::item(nx::pow(a, b), {6}) == Approx(std::sqrt(2.)));  // a fractional exponent: exp(y log z)
  CHECK(text(nx::pow(nx::create(nx::complex64, {1}, std::vector<std::complex<float>>{{0, 0}}), 0.)) ==
        "complex64 [1] [1+0j]");
  auto compiled = rune::jit([](const Tensor& x, const Tensor& y) { return nx::pow(x, y); });
  CHECK(same_bits(compiled(a, b), nx::pow(a, b)));
  // recip(z) is 1 / z: at a zero, an infinity (C99 G.5.1; np.reciprocal gives nan+nanj there)
  const std::vector<C> zeros{{0, 0}, {-0., 0}, {0, -0.}, {-0., -0.}};
  for (const C& z : nx::to_vector<C>(nx::recip(nx::create(nx::complex128, {4}, zeros))))
    CHECK((std::isinf(z.real()) || std::isinf(z.imag())));
}

TEST_CASE("complex arithmetic") {
  std::vector<std::complex<double>> z{{1, 1}, {0, 2}};
  Tensor t = nx::create(nx::complex128, {2}, z);
  CHECK(text(t * t) == "complex128 [2] [0+2j, -4+0j]");
  CHECK(text(nx::abs(nx::create(nx::complex64, {1}, std::vector<std::complex<float>>{{3, 4}}))) == "float32 [1] [5]");
  CHECK(nx::to_vector<std::complex<double>>(nx::exp(nx::create(nx::complex128, {1}, {0})))[0] ==
        std::complex<double>(1, 0));
}

TEST_CASE("large operands split over threads give the same bits as small ones") {
  const std::int64_t n = 1 << 20;
  Tensor x = nx::linspace(nx::float32, -3, 3, n);
  Tensor y = nx::tanh(x * 2. + 1.) * x - nx::exp(-x * x);
  std::vector<float> big = nx::to_vector<float>(y);
  for (std::int64_t i : {std::int64_t(0), std::int64_t(12345), n / 2 + 7, n - 1}) {
    Tensor xi = nx::slice(x, {i}, {i + 1});
    float one = nx::to_vector<float>(nx::tanh(xi * 2. + 1.) * xi - nx::exp(-xi * xi))[0];
    CHECK(std::memcmp(&one, &big[std::size_t(i)], sizeof one) == 0);
  }
}
