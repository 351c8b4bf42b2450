// Printing: the exact format of the API, shortest round-trip floats, -0, inf,
// nan, nested brackets, every dtype, and the elision of large tensors.
#include <cmath>
#include <limits>
#include <sstream>

#include "helpers.hpp"

using nx::Tensor;
using namespace test;

TEST_CASE("the API's printing examples") {
  CHECK(text(nx::scalar(nx::float64, 24)) == "float64 [] 24");
  CHECK(text(f64({4}, {1, 2, 6, 24})) == "float64 [4] [1, 2, 6, 24]");
  CHECK(text(f64({2}, {0.25, 1. / 6})) == "float64 [2] [0.25, 0.16666666666666666]");
  CHECK(text(nx::scalar(nx::float64, 2.446119840025779e-14)) == "float64 [] 2.446119840025779e-14");
  CHECK(text(f64({2, 2}, {1, 2, 3, 4})) == "float64 [2, 2] [[1, 2], [3, 4]]");
  CHECK(text(nx::create(nx::bool_, {3}, {1, 0, 1})) == "bool [3] [true, false, true]");
  CHECK(text(nx::create(nx::int32, {2}, {3, -1})) == "int32 [2] [3, -1]");
}

TEST_CASE("special floats") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  CHECK(text(f64({5}, {-0., inf, -inf, nan, -nan})) == "float64 [5] [-0, inf, -inf, nan, nan]");
  CHECK(text(nx::scalar(nx::float64, 1e300)) == "float64 [] 1e+300");
  CHECK(text(nx::scalar(nx::float64, 5e-324)) == "float64 [] 5e-324");
  CHECK(text(nx::scalar(nx::float32, 0.1)) == "float32 [] 0.1");
  CHECK(text(nx::scalar(nx::float32, 1. / 3)) == "float32 [] 0.33333334");
}

TEST_CASE("every dtype prints") {
  CHECK(text(nx::create(nx::int8, {2}, {-128, 127})) == "int8 [2] [-128, 127]");
  CHECK(text(nx::create(nx::int16, {1}, {-300})) == "int16 [1] [-300]");
  CHECK(text(nx::create(nx::int64, {1}, {-5e15})) == "int64 [1] [-5000000000000000]");
  CHECK(text(nx::create(nx::uint8, {2}, {0, 255})) == "uint8 [2] [0, 255]");
  CHECK(text(nx::create(nx::uint32, {1}, {4e9})) == "uint32 [1] [4000000000]");
  CHECK(text(nx::create(nx::uint64, {1}, {1e19})) == "uint64 [1] [10000000000000000000]");
  CHECK(text(nx::create(nx::float16, {3}, {0.1, 65504, 1e-7})) == "float16 [3] [0.1, 65500, 1e-07]");
  CHECK(text(nx::create(nx::bfloat16, {2}, {0.1, 3})) == "bfloat16 [2] [0.1, 3]");
  CHECK(text(nx::create(nx::complex64, {1}, {2})) == "complex64 [1] [2+0j]");
  std::vector<std::complex<double>> z{{1, -2.5}};
  CHECK(text(nx::create(nx::complex128, {1}, z)) == "complex128 [1] [1-2.5j]");
}

TEST_CASE("empty tensors and axes of length one") {
  CHECK(text(nx::zeros(nx::float64, {2, 0})) == "float64 [2, 0] [[], []]");
  CHECK(text(nx::zeros(nx::float64, {0, 2})) == "float64 [0, 2] []");
  CHECK(text(nx::ones(nx::int32, {1, 1, 1})) == "int32 [1, 1, 1] [[[1]]]");
}

TEST_CASE("over 1000 elements, axes longer than 6 show three entries at each end") {
  CHECK(text(nx::arange(nx::int32, 0, 1000)).find("...") == std::string::npos);
  CHECK(text(nx::arange(nx::int32, 0, 1001)) == "int32 [1001] [0, 1, 2, ..., 998, 999, 1000]");
  CHECK(text(nx::reshape(nx::arange(nx::int32, 0, 2000), {2, 1000})) ==
        "int32 [2, 1000] [[0, 1, 2, ..., 997, 998, 999], [1000, 1001, 1002, ..., 1997, 1998, 1999]]");
  CHECK(text(nx::reshape(nx::arange(nx::int32, 0, 1400), {200, 7})) ==
        "int32 [200, 7] [[0, 1, 2, ..., 4, 5, 6], [7, 8, 9, ..., 11, 12, 13], [14, 15, 16, ..., 18, 19, 20], ..., "
        "[1379, 1380, 1381, ..., 1383, 1384, 1385], [1386, 1387, 1388, ..., 1390, 1391, 1392], "
        "[1393, 1394, 1395, ..., 1397, 1398, 1399]]");
}

TEST_CASE("print, operator<< and to_string agree") {
  Tensor t = f64({2}, {1, 2});
  std::ostringstream os;
  os << t;
  CHECK(os.str() == nx::to_string(t));
}
