// nx: tensors. Creation, reading, printing, arithmetic.
//
// Every function works on concrete values and (once the trace stack exists)
// on stand-ins; misuse throws std::invalid_argument whose text starts with
// the function's qualified name.
#pragma once

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rune/tensor.hpp"

namespace nx {

// ---- creation (always concrete values)
Tensor create(DType dtype, const Shape& shape, std::initializer_list<double> values);
Tensor scalar(DType dtype, double value);
Tensor full(DType dtype, const Shape& shape, double value);
Tensor zeros(DType dtype, const Shape& shape);
Tensor ones(DType dtype, const Shape& shape);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
Tensor arange(DType dtype, double start, double stop, double step = 1);
Tensor linspace(DType dtype, double start, double stop, std::int64_t n);
Tensor eye(DType dtype, std::int64_t n);
// A C-order tensor viewing the caller's memory, without a copy: `data`
// holds numel(shape) elements of dtype, aligned to the element size, and
// must outlive the tensor and every value viewing it (nx::reshape and the
// like view it too); its elements must not change while rune reads them.
// It is never donated. Borrowed through a pointer to non-const, the memory
// may also receive a call's results (Loaded::into, rune_program_run).
Tensor borrow(DType dtype, const Shape& shape, const void* data);
Tensor borrow(DType dtype, const Shape& shape, void* data);

namespace detail {
// The dtype that holds a C++ element type exactly, for the types that have
// one (bool, the fixed-width integers, float, double, std::complex).
template <class T> constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return bool_;
  else if constexpr (std::is_same_v<T, float16_t>) return float16;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return bfloat16;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return complex128;
  else if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? float32 : float64;
  else if constexpr (std::is_signed_v<T>)
    return sizeof(T) == 1 ? int8 : sizeof(T) == 2 ? int16 : sizeof(T) == 4 ? int32 : int64;
  else
    return sizeof(T) == 1 ? uint8 : sizeof(T) <= 4 ? uint32 : uint64;
}
// Whether T's elements are stored as they are (no widening needed).
template <class T> constexpr bool stored_as_is() {
  return !(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_unsigned_v<T> && sizeof(T) == 2) &&
         !std::is_same_v<T, long double>;
}
Tensor create_from(DType dtype, const Shape& shape, DType source, const void* data, std::size_t count);
void read_into(const Tensor& t, DType target, void* out, const char* api);
}  // namespace detail

template <class T>
  requires(std::is_arithmetic_v<T> || std::is_same_v<T, std::complex<float>> ||
           std::is_same_v<T, std::complex<double>>)
Tensor create(DType dtype, const Shape& shape, std::span<const T> values) {
  if constexpr (detail::stored_as_is<T>() && !std::is_same_v<T, bool>) {
    return detail::create_from(dtype, shape, detail::dtype_of<T>(), values.data(), values.size());
  } else {  // bool (one byte each here), 16-bit unsigned and long double widen first
    using W = std::conditional_t<std::is_same_v<T, bool>, bool,
                                 std::conditional_t<std::is_integral_v<T>, std::uint32_t, double>>;
    std::vector<std::conditional_t<std::is_same_v<W, bool>, unsigned char, W>> wide(values.begin(), values.end());
    return detail::create_from(dtype, shape, detail::dtype_of<W>(), wide.data(), wide.size());
  }
}
template <class T>
Tensor create(DType dtype, const Shape& shape, const std::vector<T>& values) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<unsigned char> bytes(values.begin(), values.end());
    return detail::create_from(dtype, shape, bool_, bytes.data(), bytes.size());
  } else {
    return create(dtype, shape, std::span<const T>(values));
  }
}

// ---- reading
double item(const Tensor& t, const Index& index = {});
template <class T> std::vector<T> to_vector(const Tensor& t) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<unsigned char> bytes(std::size_t(t.defined() ? t.numel() : 0));
    detail::read_into(t, bool_, bytes.data(), "nx::to_vector");
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else if constexpr (detail::stored_as_is<T>()) {
    std::vector<T> out(std::size_t(t.defined() ? t.numel() : 0));
    detail::read_into(t, detail::dtype_of<T>(), out.data(), "nx::to_vector");
    return out;
  } else if constexpr (std::is_integral_v<T>) {
    // 16-bit unsigned, as a cast to such a dtype would convert: floats
    // saturate (NaN gives 0), integers wrap around (as int16_t's do).
    if (t.defined() && is_inexact(t.dtype())) {
      std::vector<T> out;
      for (double v : to_vector<double>(t))
        out.push_back(!(v > 0) ? T(0) : v >= double(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max() : T(v));
      return out;
    }
    std::vector<std::uint32_t> wide = to_vector<std::uint32_t>(t);
    return std::vector<T>(wide.begin(), wide.end());
  } else {  // long double
    std::vector<double> wide = to_vector<double>(t);
    return std::vector<T>(wide.begin(), wide.end());
  }
}
std::string to_string(const Tensor& t);
void print(const Tensor& t);
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// The tensors nx::concatenate and nx::stack take, placed as an Operand is:
// a vector, or a braced list ({a, b}), which it keeps.
class Operands {
 public:
  Operands(const std::vector<Tensor>& ts, rune::detail::CallSite site = rune::detail::CallSite::current()) noexcept
      : tensors_(ts), site_(site) {}
  Operands(std::initializer_list<Tensor> ts, rune::detail::CallSite site = rune::detail::CallSite::current())
      : listed_(ts), tensors_(listed_), site_(site) {}
  operator const std::vector<Tensor>&() const noexcept { return tensors_; }
  const rune::detail::CallSite& site() const noexcept { return site_; }

 private:
  std::vector<Tensor> listed_;
  const std::vector<Tensor>& tensors_;
  rune::detail::CallSite site_;
};

// ---- elementwise
#define NX_UNARY_FUNCTIONS(X)                                                                     \
  X(neg) X(abs) X(sign) X(exp) X(exp2) X(log) X(log2) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(recip) \
  X(square) X(sin) X(cos) X(tan) X(tanh) X(sinh) X(cosh) X(asin) X(acos) X(atan) X(sigmoid)       \
  X(erf) X(floor) X(ceil) X(round) X(isnan) X(isinf) X(isfinite) X(logical_not)
#define NX_DECLARE_UNARY(f) Tensor f(Operand x);
NX_UNARY_FUNCTIONS(NX_DECLARE_UNARY)
#undef NX_DECLARE_UNARY

#define NX_BINARY_FUNCTIONS(X)                                                                     \
  X(add) X(sub) X(mul) X(div) X(pow) X(maximum) X(minimum) X(atan2) X(mod) X(less) X(less_equal)   \
  X(greater) X(greater_equal) X(equal) X(not_equal) X(logical_and) X(logical_or) X(logical_xor)
#define NX_DECLARE_BINARY(f)                 \
  Tensor f(Operand a, const Tensor& b); \
  Tensor f(Operand a, double b);        \
  Tensor f(double a, Operand b);
NX_BINARY_FUNCTIONS(NX_DECLARE_BINARY)
#undef NX_DECLARE_BINARY

Tensor operator+(Operand a, const Tensor& b);
Tensor operator+(Operand a, double b);
Tensor operator+(double a, Operand b);
Tensor operator-(Operand a, const Tensor& b);
Tensor operator-(Operand a, double b);
Tensor operator-(double a, Operand b);
Tensor operator*(Operand a, const Tensor& b);
Tensor operator*(Operand a, double b);
Tensor operator*(double a, Operand b);
Tensor operator/(Operand a, const Tensor& b);
Tensor operator/(Operand a, double b);
Tensor operator/(double a, Operand b);
Tensor operator-(Operand a);
// Compound assignment rebinds the handle (x = x + y): other handles to the
// old value keep it.
Tensor& operator+=(Assigned a, const Tensor& b);
Tensor& operator+=(Assigned a, double b);
Tensor& operator-=(Assigned a, const Tensor& b);
Tensor& operator-=(Assigned a, double b);
Tensor& operator*=(Assigned a, const Tensor& b);
Tensor& operator*=(Assigned a, double b);
Tensor& operator/=(Assigned a, const Tensor& b);
Tensor& operator/=(Assigned a, double b);

Tensor where(Operand cond, const Tensor& a, const Tensor& b);
Tensor where(Operand cond, const Tensor& a, double b);
Tensor where(Operand cond, double a, const Tensor& b);
Tensor cast(Operand t, DType dtype);
Tensor clamp(Operand t, double lo, double hi);
Tensor clamp(Operand t, const Tensor& lo, const Tensor& hi);

// ---- reductions (axes empty = every axis; negative axes count from the end)
// sum and prod accumulate in `dtype` (t is cast to it first); by default,
// as NumPy: bool and signed integers narrower than int64 in int64, unsigned
// ones in uint64, others in their own dtype.
Tensor sum(Operand t, const Axes& axes = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(Operand t, const Axes& axes = {}, bool keepdims = false);
Tensor prod(Operand t, const Axes& axes = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Tensor max(Operand t, const Axes& axes = {}, bool keepdims = false);
Tensor min(Operand t, const Axes& axes = {}, bool keepdims = false);
Tensor all(Operand t, const Axes& axes = {}, bool keepdims = false);
Tensor any(Operand t, const Axes& axes = {}, bool keepdims = false);
Tensor logsumexp(Operand t, const Axes& axes = {}, bool keepdims = false);
Tensor argmax(Operand t, std::int64_t axis);  // int32
Tensor argmin(Operand t, std::int64_t axis);
// out[s] = the sum of data's rows i with segment_ids[i] == s, for s in
// [0, num_segments); rows whose id is outside that range are dropped.
Tensor segment_sum(Operand data, const Tensor& segment_ids, std::int64_t num_segments);

// ---- shape
Tensor reshape(Operand t, const Shape& shape);
Tensor transpose(Operand t, const Axes& perm = {});
Tensor broadcast_to(Operand t, const Shape& shape);
Tensor expand_dims(Operand t, const Axes& axes);
Tensor squeeze(Operand t, const Axes& axes = {});
Tensor moveaxis(Operand t, std::int64_t from, std::int64_t to);
Tensor flatten(Operand t);
Tensor concatenate(Operands ts, std::int64_t axis = 0);
Tensor stack(Operands ts, std::int64_t axis = 0);
Tensor pad(Operand t, const std::vector<std::pair<std::int64_t, std::int64_t>>& widths, double value = 0);
Tensor flip(Operand t, const Axes& axes = {});
Tensor slice(Operand t, const Shape& starts, const Shape& stops, const Shape& steps = {});
Tensor get(Operand t, std::int64_t i);
Tensor take(Operand t, const Tensor& indices, std::int64_t axis = 0);
// take's transpose: target with updates' slabs added at indices along axis
// (repeated indices accumulate; indices wrap and clamp as take's do).
Tensor scatter_add(Operand target, const Tensor& indices, const Tensor& updates, std::int64_t axis = 0);
Tensor dynamic_slice(Operand t, const Tensor& starts, const Shape& sizes);
Tensor dynamic_update_slice(Operand t, const Tensor& update, const Tensor& starts);

// ---- linear algebra
Tensor matmul(Operand a, const Tensor& b);
Tensor dot(Operand a, const Tensor& b);
// x with a x = b: a [..., n, n]; b [..., n] or [..., n, k]; batch axes broadcast.
Tensor solve(Operand a, const Tensor& b);
Tensor inv(Operand a);
// The lower-triangular l with a = l l^H (a Hermitian positive definite).
Tensor cholesky(Operand a);

// ---- placement and donation
Tensor place(const Placement& placement, Operand t);
// A handle to t's storage that a compiled call takes: afterwards reading t
// (or any view of its storage) throws. Outside a compiled call it is t.
Tensor donate(const Tensor& t);

}  // namespace nx
