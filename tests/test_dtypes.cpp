// dtypes: names, sizes, classes, the 16-bit float conversions.
#include <cmath>
#include <limits>

#include "helpers.hpp"

TEST_CASE("every dtype has a name that reads back, and a size") {
  const char* names[] = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint32",
                         "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
  const std::size_t sizes[] = {1, 1, 2, 4, 8, 1, 4, 8, 2, 2, 4, 8, 8, 16};
  for (int d = 0; d < nx::dtype_count; ++d) {
    CHECK(nx::name(nx::DType(d)) == names[d]);
    CHECK(nx::dtype_from_name(names[d]) == nx::DType(d));
    CHECK(nx::size_of(nx::DType(d)) == sizes[d]);
  }
  CHECK_THROWS_WITH(nx::dtype_from_name("float8"), "nx::dtype_from_name: no dtype is named 'float8'");
  CHECK(nx::is_floating(nx::bfloat16));
  CHECK(nx::is_complex(nx::complex64));
  CHECK(nx::is_integer(nx::uint64));
  CHECK_FALSE(nx::is_integer(nx::bool_));
}

TEST_CASE("float16 rounds to nearest even, with subnormals, inf and nan") {
  auto round_trip = [](float f) { return float(nx::float16_t(f)); };
  CHECK(round_trip(1.f) == 1.f);
  CHECK(round_trip(65504.f) == 65504.f);
  CHECK(std::isinf(round_trip(65520.f)));
  CHECK(round_trip(65519.f) == 65504.f);
  CHECK(round_trip(1.f + 1.f / 2048) == 1.f);              // a tie rounds to even
  CHECK(round_trip(1.f + 3.f / 2048) == 1.f + 2.f / 1024);  // a tie rounds to even
  CHECK(round_trip(5.960464477539063e-8f) == 5.960464477539063e-8f);  // the smallest subnormal
  CHECK(round_trip(2.9e-8f) == 0.f);
  CHECK(std::signbit(round_trip(-0.f)));
  CHECK(std::isnan(round_trip(std::nanf(""))));
  for (std::uint32_t bits = 0; bits < 0x7c00; ++bits) {  // every finite positive half reads back
    nx::float16_t h;
    h.bits = std::uint16_t(bits);
    CHECK(nx::float16_t(float(h)).bits == bits);
  }
}

TEST_CASE("bfloat16 keeps float's exponent and rounds its mantissa to nearest even") {
  auto round_trip = [](float f) { return float(nx::bfloat16_t(f)); };
  CHECK(round_trip(1.f) == 1.f);
  CHECK(round_trip(3e38f) == Approx(3e38f).epsilon(0.004));
  CHECK(round_trip(1.5f) == 1.5f);
  CHECK(round_trip(1.f + 1.f / 256) == 1.f);
  CHECK(std::isnan(round_trip(std::nanf(""))));
  CHECK(std::isinf(round_trip(std::numeric_limits<float>::infinity())));
}

namespace {
// The double halfway between a 16-bit float and the next one up (of bits
// `bits` and bits + 1), exact in a double.
template <class Half> double midpoint(std::uint16_t bits) {
  Half lo, hi;
  lo.bits = bits;
  hi.bits = std::uint16_t(bits + 1);
  return (double(float(lo)) + double(float(hi))) / 2;
}

// The bits of a 16-bit float tensor's elements.
std::vector<std::uint16_t> bits_of(const nx::Tensor& t) {
  const nx::Tensor c = nx::ops::contiguous(t);
  const auto* at = nx::ops::data_of<std::uint16_t>(c);
  return std::vector<std::uint16_t>(at, at + c.numel());
}

// Every way a double becomes a 16-bit element (create, cast, and on a
// sample scalar, full and a double operand) gives `expected`.
void check_made(nx::DType dtype, const std::vector<double>& v, const std::vector<std::uint16_t>& expected) {
  const std::int64_t n = std::int64_t(v.size());
  CHECK(bits_of(nx::create(dtype, {n}, v)) == expected);
  CHECK(bits_of(nx::cast(nx::create(nx::float64, {n}, v), dtype)) == expected);
  for (std::size_t i = 0; i < v.size(); i += 97) {
    const std::vector<std::uint16_t> one{expected[i]};
    CHECK(bits_of(nx::scalar(dtype, v[i])) == one);
    CHECK(bits_of(nx::full(dtype, {1}, v[i])) == one);
    CHECK(bits_of(nx::zeros(dtype, {1}) + v[i]) == one);
  }
}

// Just above, just below and at the midpoint after every finite positive
// value of Half but the largest (of bits `last`): up, down and to even.
template <class Half> void check_every_midpoint(nx::DType dtype, std::uint16_t last) {
  std::vector<double> above, below, at;
  std::vector<std::uint16_t> up, down, even;
  for (std::uint16_t b = 0; b < last; ++b) {
    const double m = midpoint<Half>(b);
    above.push_back(std::nextafter(m, INFINITY)), up.push_back(std::uint16_t(b + 1));
    below.push_back(std::nextafter(m, 0.)), down.push_back(b);
    at.push_back(m), even.push_back(std::uint16_t(b % 2 ? b + 1 : b));
  }
  check_made(dtype, above, up);
  check_made(dtype, below, down);
  check_made(dtype, at, even);
}
}  // namespace

// A double rounds once into float16 and bfloat16: through float it would
// round twice, and a double just past a midpoint would become the midpoint,
// a tie (NumPy: np.float16(1.0004882821813226) is 1.0009765625).
TEST_CASE("a double rounds once, to nearest even, into float16 and bfloat16, on every path") {
  CHECK(nx::item(nx::cast(nx::scalar(nx::float64, 1.0004882821813226), nx::float16)) == 1.0009765625);
  CHECK(nx::item(nx::scalar(nx::float16, 1.0004882821813226)) == 1.0009765625);
  check_every_midpoint<nx::float16_t>(nx::float16, 0x7bff);
  check_every_midpoint<nx::bfloat16_t>(nx::bfloat16, 0x7f7f);
  // past the largest, the midpoint to the next power of two rounds to inf; NaN stays NaN; -0 keeps its sign
  CHECK(test::text(nx::create(nx::float16, {4}, {65519.99, 65520., -0., std::nan("")})) ==
        "float16 [4] [65500, inf, -0, nan]");
  // 64-bit integers round once too (through float, 2^30 + 2^22 + 1 would be a tie, rounded down)
  const std::vector<std::int64_t> big{(std::int64_t(1) << 30) + (1 << 22) + 1,
                                      (std::int64_t(1) << 62) + (std::int64_t(1) << 54) + 1};
  const std::vector<double> rounded{std::ldexp(1., 30) + std::ldexp(1., 23), std::ldexp(1., 62) + std::ldexp(1., 55)};
  CHECK(nx::to_vector<double>(nx::create(nx::bfloat16, {2}, big)) == rounded);
  CHECK(nx::to_vector<double>(nx::cast(nx::create(nx::int64, {2}, big), nx::bfloat16)) == rounded);
  CHECK(nx::to_vector<double>(nx::cast(nx::create(nx::uint64, {2}, big), nx::bfloat16)) == rounded);
  CHECK(nx::to_vector<double>(nx::cast(nx::create(nx::int32, {1}, {(1 << 30) + (1 << 22) + 1}), nx::bfloat16)) ==
        std::vector<double>{rounded[0]});
}
