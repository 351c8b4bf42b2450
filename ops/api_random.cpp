// nx::random: keys, and uniform and normal values made with primitives from
// random_bits (ops/family_random.cpp), so that every transformation sees
// through them and a compiled call gives eager's bits.
#include "rune/random.hpp"

#include <charconv>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/kernels/loops.hpp"
#include "ops/primitive.hpp"
#include "ops/sizes.hpp"
#include "rune/nx.hpp"

namespace nx::random {
namespace {

using ops::fail;

void check_key(std::string_view api, const Tensor& key) {
  if (!key.defined()) fail(api, "the key holds no value (it was default-constructed)");
  // (under a map, the key's type is a lane's)
  if (key.dtype() != uint32 || key.shape() != Shape{2})
    fail(api, "the key must be uint32 [2], got " + ops::describe(key));
}

void check_real_float(std::string_view api, DType dtype) {
  if (!is_floating(dtype)) fail(api, "dtype " + std::string(name(dtype)) + " is not a real float dtype");
}

std::string text(double x) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

Shape with_axis(Shape shape, std::int64_t n) {
  shape.push_back(n);
  return shape;
}

Tensor stream(const Tensor& key, const Shape& shape) {
  ops::Params params;
  params.shape = shape;
  return ops::bind(ops::Prim::random_bits, {key}, params);
}

// Element i of t's last axis, that axis dropped.
Tensor last(const Tensor& t, std::int64_t i) {
  Shape starts(t.shape().size(), 0), stops = t.shape();
  starts.back() = i;
  stops.back() = i + 1;
  return squeeze(slice(t, starts, stops), {-1});
}

int mantissa_bits(DType dtype) {
  switch (dtype) {
    case float16: return 10;
    case bfloat16: return 7;
    case float32: return 23;
    default: return 52;
  }
}

// Uniform in [0, 1), exactly m 2^-p with m the top p bits of the stream, p
// the dtype's mantissa width: the value the mantissa trick gives (the bits
// under the exponent of 1, minus 1). float64 takes its 52 bits from both
// words of a block: the top 20 of the first, all of the second.
Tensor unit(const Tensor& key, DType dtype, const Shape& shape) {
  const int p = mantissa_bits(dtype);
  if (dtype != float64) return cast(stream(key, shape) / std::ldexp(1., 32 - p), dtype) * std::ldexp(1., -p);
  const Tensor words = stream(key, with_axis(shape, 2));
  return cast(last(words, 0) / std::ldexp(1., 12), float64) * std::ldexp(1., -20) +
         cast(last(words, 1), float64) * std::ldexp(1., -52);
}

// The largest value of the dtype below the dtype's value of x: the next
// representable number towards minus infinity, through the bits of the
// 16-bit types (sign and magnitude).
template <class Half> double below_half(double x) {
  const std::uint16_t b = ops::kernels::convert_value<Half>(x).bits;  // (rounded once)
  Half next;
  next.bits = (b & 0x7fff) == 0 ? 0x8001 : (b & 0x8000) ? b + 1 : b - 1;
  return double(float(next));
}
double below(DType dtype, double x) {
  switch (dtype) {
    case float16: return below_half<float16_t>(x);
    case bfloat16: return below_half<bfloat16_t>(x);
    case float32: return std::nextafter(float(x), -INFINITY);
    default: return std::nextafter(x, -INFINITY);
  }
}

}  // namespace

Tensor key(std::uint64_t seed) {
  return create(uint32, {2}, std::vector<std::uint32_t>{std::uint32_t(seed >> 32), std::uint32_t(seed)});
}

Tensor split(Operand key, std::int64_t n) {
  const detail::Calling here(key.site());
  check_key("nx::random::split", key);
  if (n < 0) fail("nx::random::split", "n = " + std::to_string(n) + " is negative");
  return stream(key, {n, 2});
}

Tensor bits(Operand key, const Shape& shape) {
  const detail::Calling here(key.site());
  check_key("nx::random::bits", key);
  ops::check_shape("nx::random::bits", shape);
  return stream(key, shape);
}

Tensor uniform(Operand key, DType dtype, const Shape& shape, double lo, double hi) {
  const detail::Calling here(key.site());
  const std::string_view api = "nx::random::uniform";
  check_key(api, key);
  check_real_float(api, dtype);
  ops::check_shape(api, shape);
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    fail(api, "lo = " + text(lo) + " is not below hi = " + text(hi) + " (both finite)");
  // lo + (hi - lo) u may round up to hi: the minimum keeps it below.
  return minimum(unit(key, dtype, shape) * (hi - lo) + lo, below(dtype, hi));
}

Tensor normal(Operand key, DType dtype, const Shape& shape) {
  const detail::Calling here(key.site());
  const std::string_view api = "nx::random::normal";
  check_key(api, key);
  check_real_float(api, dtype);
  ops::check_shape(api, shape);
  // Box-Muller on a pair of uniforms per value (one block's words):
  // sqrt(-2 log(1 - u1)) cos(2 pi u2), 16-bit floats computed in float32.
  const DType compute = dtype == float64 ? float64 : float32;
  const Tensor u = unit(key, compute, with_axis(shape, 2));
  const Tensor radius = sqrt(log(1. - last(u, 0)) * -2.);
  const Tensor z = radius * cos(last(u, 1) * (2 * std::numbers::pi));
  return dtype == compute ? z : cast(z, dtype);
}

}  // namespace nx::random
