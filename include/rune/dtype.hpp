// Element types, shapes and placements: the static description of a tensor.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/container/small_vector.hpp>

#include "rune/half.hpp"

namespace nx {

// The order is part of the program text format and of compiled keys.
enum class DType : std::uint8_t {
  bool_, int8, int16, int32, int64, uint8, uint32, uint64,
  float16, bfloat16, float32, float64, complex64, complex128,
};
inline constexpr int dtype_count = 14;

inline constexpr DType bool_ = DType::bool_;
inline constexpr DType int8 = DType::int8;
inline constexpr DType int16 = DType::int16;
inline constexpr DType int32 = DType::int32;
inline constexpr DType int64 = DType::int64;
inline constexpr DType uint8 = DType::uint8;
inline constexpr DType uint32 = DType::uint32;
inline constexpr DType uint64 = DType::uint64;
inline constexpr DType float16 = DType::float16;
inline constexpr DType bfloat16 = DType::bfloat16;
inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;
inline constexpr DType complex64 = DType::complex64;
inline constexpr DType complex128 = DType::complex128;

std::string_view name(DType dtype);
// The dtype whose name() is `text`; throws std::invalid_argument otherwise.
DType dtype_from_name(std::string_view text);

inline constexpr bool is_floating(DType d) {
  return d == float16 || d == bfloat16 || d == float32 || d == float64;
}
inline constexpr bool is_complex(DType d) { return d == complex64 || d == complex128; }
inline constexpr bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }
inline constexpr bool is_unsigned(DType d) {
  return d == uint8 || d == uint32 || d == uint64;
}
inline constexpr bool is_integer(DType d) {
  return d == int8 || d == int16 || d == int32 || d == int64 || is_unsigned(d);
}

// The C++ element type of each dtype (bool is stored as one byte).
template <DType D> struct element;
template <> struct element<bool_> { using type = bool; };
template <> struct element<int8> { using type = std::int8_t; };
template <> struct element<int16> { using type = std::int16_t; };
template <> struct element<int32> { using type = std::int32_t; };
template <> struct element<int64> { using type = std::int64_t; };
template <> struct element<uint8> { using type = std::uint8_t; };
template <> struct element<uint32> { using type = std::uint32_t; };
template <> struct element<uint64> { using type = std::uint64_t; };
template <> struct element<float16> { using type = float16_t; };
template <> struct element<bfloat16> { using type = bfloat16_t; };
template <> struct element<float32> { using type = float; };
template <> struct element<float64> { using type = double; };
template <> struct element<complex64> { using type = std::complex<float>; };
template <> struct element<complex128> { using type = std::complex<double>; };
template <DType D> using element_t = typename element<D>::type;

// Calls f(std::integral_constant<DType, D>{}) for the runtime dtype d.
template <class F> decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
#define NX_VISIT_CASE(D) \
  case DType::D: return f(std::integral_constant<DType, DType::D>{});
    NX_VISIT_CASE(bool_) NX_VISIT_CASE(int8) NX_VISIT_CASE(int16) NX_VISIT_CASE(int32)
    NX_VISIT_CASE(int64) NX_VISIT_CASE(uint8) NX_VISIT_CASE(uint32) NX_VISIT_CASE(uint64)
    NX_VISIT_CASE(float16) NX_VISIT_CASE(bfloat16) NX_VISIT_CASE(float32)
    NX_VISIT_CASE(float64) NX_VISIT_CASE(complex64) NX_VISIT_CASE(complex128)
#undef NX_VISIT_CASE
  }
  __builtin_unreachable();
}

// The bytes of one element (bool: 1).
inline std::size_t size_of(DType dtype) {
  return visit_dtype(dtype, [](auto d) { return sizeof(element_t<decltype(d)::value>); });
}

// A shape, an index into a tensor, a list of axes: small vectors of int64_t.
using Shape = boost::container::small_vector<std::int64_t, 4>;
using Index = Shape;
using Axes = Shape;

std::string to_string(const Shape& shape);  // "[2, 3]"

// The limits of one value: at most max_rank axes, and at most max_elements
// elements (counted as the product of its nonzero lengths, which bounds its
// strides too). A function asked for a shape past them throws
// std::invalid_argument naming itself and the shape.
inline constexpr std::size_t max_rank = 64;                          // NumPy 2's limit
inline constexpr std::int64_t max_elements = std::int64_t(1) << 48;  // 4 PiB of complex128
// The product of the lengths (INT64_MAX where it overflows: no value has
// such a shape, see nx::max_elements).
// (inline: every eager operation asks it)
inline std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;  // only for shapes no value may have
  return n;
}

// Where a value's elements live. Only the host exists today.
class Placement {
 public:
  static Placement host() { return Placement(0); }
  std::string_view name() const { return "CPU"; }
  bool operator==(const Placement&) const = default;
  int id() const { return id_; }

 private:
  explicit Placement(int id) : id_(id) {}
  int id_;
};

}  // namespace nx
