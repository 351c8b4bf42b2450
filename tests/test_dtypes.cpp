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
