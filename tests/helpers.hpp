// Small helpers shared by the unit tests.
#pragma once

#include <catch2/catch.hpp>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include <rune/nx.hpp>

#include "ops/concrete.hpp"

namespace test {

inline std::vector<double> values(const nx::Tensor& t) { return nx::to_vector<double>(t); }

// A user error's text placed at a line of the test file that wrote the
// matcher: "<message> (at test_shape.cpp:<line>)" (nx::ops::PlacedError).
class Placed : public Catch::MatcherBase<std::string> {
 public:
  explicit Placed(std::string message, std::string_view file = __builtin_FILE())
      : message_(std::move(message)), file_(file.substr(file.find_last_of('/') + 1)) {}
  bool match(const std::string& text) const override {
    const std::string prefix = message_ + " (at " + file_ + ":";
    if (!text.starts_with(prefix) || !text.ends_with(")")) return false;
    const std::string line = text.substr(prefix.size(), text.size() - prefix.size() - 1);
    return !line.empty() && line.find_first_not_of("0123456789") == std::string::npos;
  }
  std::string describe() const override { return "is \"" + message_ + "\" placed at a line of " + file_; }

 private:
  std::string message_, file_;
};
inline std::string text(const nx::Tensor& t) { return nx::to_string(t); }

inline std::uint64_t bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Same dtype, shape and element bytes (NaNs of equal payload are equal).
inline bool same_bits(const nx::Tensor& a, const nx::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const nx::Tensor x = nx::ops::contiguous(a), y = nx::ops::contiguous(b);
  return std::memcmp(nx::ops::base_address(*x.impl()), nx::ops::base_address(*y.impl()),
                     std::size_t(x.numel()) * nx::size_of(x.dtype())) == 0;
}

// Two vectors of the same elements, byte for byte (NaNs of equal payload
// are equal).
template <class T> bool bits_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// RUNE_JIT_DEBUG's report of the promotions in calls of f (on stderr).
template <class F> std::string promotions(F call) {
  setenv("RUNE_JIT_DEBUG", "1", 1);
  std::ostringstream caught;
  std::streambuf* was = std::cerr.rdbuf(caught.rdbuf());
  call();
  std::cerr.rdbuf(was);
  unsetenv("RUNE_JIT_DEBUG");
  return caught.str();
}

// Bit for bit, but any NaN matches any NaN: which operand's NaN an
// operation of two NaNs returns is the compiler's choice in the VM's C++
// (its operands' order: -O3 and -O0 builds differ), in the reference
// interpreter's vector loops and in machine code.
inline bool same_values(const nx::Tensor& a, const nx::Tensor& b) {
  if (same_bits(a, b)) return true;
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || (a.dtype() != nx::float32 && a.dtype() != nx::float64))
    return false;
  const std::vector<double> x = nx::to_vector<double>(a), y = nx::to_vector<double>(b);
  for (std::size_t k = 0; k < x.size(); ++k)
    if (!(std::isnan(x[k]) && std::isnan(y[k])) && std::bit_cast<std::uint64_t>(x[k]) != std::bit_cast<std::uint64_t>(y[k]))
      return false;
  return true;
}

// Results of two runs (vectors of tensors), each same_values.
template <class Values> void same_results(const Values& got, const Values& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("result " << k << ": " << nx::to_string(got[k]) << " against " << nx::to_string(want[k]));
    CHECK(same_values(got[k], want[k]));
  }
}

// Creates a float64 tensor: f64({2, 2}, {1, 2, 3, 4}).
inline nx::Tensor f64(const nx::Shape& shape, std::initializer_list<double> v) {
  return nx::create(nx::float64, shape, v);
}

// The program text of the API's example (seed page Tracing).
inline const char* api_example_text =
    "program (%0)\n"
    "  %1 : float64 [] at CPU = Map [float64:0x0000000000000000] at CPU\n"
    "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (%0), captures ()\n"
    "    step\n"
    "      program (%4, %5)\n"
    "        %6 : float64 [] at CPU = Map [mul(x0, x1)] (x0: float64 [] at CPU) (x1: float64 [] at CPU)\n"
    "          with x0 = %5, x1 = %5\n"
    "        %7 : float64 [] at CPU = Map [add(x0, x1)] (x0: float64 [] at CPU) (x1: float64 [] at CPU)\n"
    "          with x0 = %4, x1 = %6\n"
    "        return %7, %7\n"
    "  return %3\n";

}  // namespace test

using Catch::Matchers::StartsWith;
using Catch::Matchers::Contains;
