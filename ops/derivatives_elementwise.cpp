// Derivative rules of the elementwise primitives.
//
// Conventions: abs has derivative 0 at 0 (of complex values, the real
// Re(conj(z / |z|) dz)); maximum and minimum give the derivative to the
// operand whose value they return (a NaN operand's: NaN propagates), and
// share it equally between tied operands; pow(x, y) has d/dx = 0 where y = 0
// and d/dy = 0 where x = 0 (as JAX); floor, ceil, round and sign have
// derivative 0; comparisons and predicates have no tangent.
#include <cmath>
#include <complex>
#include <vector>

#include "ops/derivatives.hpp"

namespace nx::ops {
namespace {

constexpr double ln2 = 0.6931471805599453, two_over_sqrt_pi = 1.1283791670955126;

// d(result) = t * factor(x, y) for the unary primitives; y is the result.
Tensor unary_factor(Prim p, const Tensor& x, const Tensor& y) {
  switch (p) {
    case Prim::exp: return y;
    case Prim::exp2: return y * ln2;
    case Prim::log: return recip(x);
    case Prim::log2: return recip(x * ln2);
    case Prim::log1p: return recip(x + 1.);
    case Prim::expm1: return y + 1.;
    case Prim::sqrt: return 0.5 / y;
    case Prim::rsqrt: return y / x * -0.5;
    case Prim::sin: return cos(x);
    case Prim::cos: return -sin(x);
    case Prim::tan: return 1. + y * y;
    case Prim::tanh: return 1. - y * y;
    case Prim::sinh: return cosh(x);
    case Prim::cosh: return sinh(x);
    case Prim::asin: return rsqrt(1. - x * x);
    case Prim::acos: return -rsqrt(1. - x * x);
    case Prim::atan: return recip(1. + x * x);
    case Prim::erf: return exp(-(x * x)) * two_over_sqrt_pi;
    default: return Tensor();
  }
}

// The real part of complex values (a conversion keeps it), and the
// imaginary part: the real part of -i z.
Tensor real_part(const Tensor& z) { return cast(z, z.dtype() == complex64 ? float32 : float64); }
Tensor imaginary_part(const Tensor& z) {
  return real_part(z * create(z.dtype(), {}, std::vector<std::complex<double>>{{0, -1}}));
}

// abs of a complex z is real, and not holomorphic: d|z| = Re(conj(s) dz)
// with s = z / |z| (0 at 0, as for reals), linear in dz.
Tensor complex_abs_jvp(const Tensor& z, const Tensor& t) {
  Tensor s = sign(z);
  return real_part(s) * real_part(t) + imaginary_part(s) * imaginary_part(t);
}

Tensor unary_jvp(Prim p, std::span<const Tensor> x, std::span<const Tensor> t, const Params& params, const Tensor& y) {
  if (zero(t[0])) return Tensor();
  switch (p) {
    case Prim::neg: return -t[0];
    case Prim::abs:
      if (is_complex(x[0].dtype())) return complex_abs_jvp(x[0], t[0]);
      return t[0] * sign(x[0]);
    case Prim::sign:
    case Prim::floor:
    case Prim::ceil:
    case Prim::round: return Tensor();
    case Prim::convert: return is_inexact(params.dtype) ? cast(t[0], params.dtype) : Tensor();
    default: return t[0] * unary_factor(p, x[0], y);
  }
}

// maximum/minimum: the weight of a's tangent (1 where the result is a's
// value: a wins or is NaN; 0.5 at ties).
Tensor winner_weight(Prim p, const Tensor& a, const Tensor& b) {
  Tensor wins = logical_or(p == Prim::maximum ? greater(a, b) : less(a, b), isnan(a));
  return where(wins, 1., where(equal(a, b), 0.5, zeros_like(a)));
}

Tensor trunc(const Tensor& x) { return where(less(x, 0.), ceil(x), floor(x)); }

Tensor binary_jvp(Prim p, std::span<const Tensor> x, std::span<const Tensor> t, const Params&, const Tensor& y) {
  const Tensor &a = x[0], &b = x[1], &ta = t[0], &tb = t[1];
  auto part = [](const Tensor& tangent, auto&& factor) { return zero(tangent) ? Tensor() : tangent * factor(); };
  Tensor out;
  switch (p) {
    case Prim::add: out = add_tangents(ta, tb); break;
    case Prim::sub: out = add_tangents(ta, zero(tb) ? Tensor() : -tb); break;
    case Prim::mul: out = add_tangents(part(ta, [&] { return b; }), part(tb, [&] { return a; })); break;
    case Prim::div: out = add_tangents(part(ta, [&] { return recip(b); }), part(tb, [&] { return -(y / b); })); break;
    case Prim::pow:
      // (y x^(y-1) is 0 * inf = NaN at x = 0, y = 0: x^0 is 1 everywhere)
      out = add_tangents(part(ta, [&] { return where(equal(b, 0.), zeros_like(y), b * pow(a, b - 1.)); }),
                         part(tb, [&] { return where(equal(a, 0.), zeros_like(y), log(a) * y); }));
      break;
    case Prim::maximum:
    case Prim::minimum: {
      Tensor w = winner_weight(p, a, b);
      out = add_tangents(part(ta, [&] { return w; }), part(tb, [&] { return 1. - w; }));
      break;
    }
    case Prim::atan2:
      out = add_tangents(part(ta, [&] { return b / (a * a + b * b); }), part(tb, [&] { return -a / (a * a + b * b); }));
      break;
    case Prim::mod: out = add_tangents(ta, part(tb, [&] { return -trunc(a / b); })); break;
    default: return Tensor();
  }
  return broadcast_tangent(out, y.shape());
}

Tensor select_jvp(Prim, std::span<const Tensor> x, std::span<const Tensor> t, const Params&, const Tensor& y) {
  if (zero(t[1]) && zero(t[2])) return Tensor();
  const Tensor& ta = zero(t[1]) ? zeros_like(x[1]) : t[1];
  const Tensor& tb = zero(t[2]) ? zeros_like(x[2]) : t[2];
  return broadcast_tangent(where(x[0], ta, tb), y.shape());
}

// ---- transposes

void neg_transpose(Prim, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType>, const Params&,
                   std::span<Tensor> cts) {
  cts[0] = -ct;
}

void add_sub_transpose(Prim p, const Tensor& ct, std::span<const Tensor> x, std::span<const TensorType> types,
                       const Params&, std::span<Tensor> cts) {
  if (zero(x[0])) cts[0] = unbroadcast(ct, types[0].shape);
  if (zero(x[1])) cts[1] = unbroadcast(p == Prim::sub ? -ct : ct, types[1].shape);
}

void mul_div_transpose(Prim p, const Tensor& ct, std::span<const Tensor> x, std::span<const TensorType> types,
                       const Params&, std::span<Tensor> cts) {
  if (p == Prim::mul) {
    if (zero(x[0])) cts[0] = unbroadcast(ct * x[1], types[0].shape);
    if (zero(x[1])) cts[1] = unbroadcast(x[0] * ct, types[1].shape);
  } else {  // linear in the numerator only
    cts[0] = unbroadcast(ct / x[1], types[0].shape);
  }
}

void select_transpose(Prim, const Tensor& ct, std::span<const Tensor> x, std::span<const TensorType> types,
                      const Params&, std::span<Tensor> cts) {
  Tensor none = zeros_like(ct);
  if (zero(x[1])) cts[1] = unbroadcast(where(x[0], ct, none), types[1].shape);
  if (zero(x[2])) cts[2] = unbroadcast(where(x[0], none, ct), types[2].shape);
}

void convert_transpose(Prim, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType> types,
                       const Params&, std::span<Tensor> cts) {
  cts[0] = cast(ct, types[0].dtype);
}

}  // namespace

void register_elementwise_derivatives(RuleTable& table) {
  for (int i = 0; i < prim_count; ++i) {
    const PrimInfo& I = info(Prim(i));
    const bool elementwise = I.family == Family::unary || I.family == Family::convert ||
                             I.family == Family::binary || I.family == Family::select;
    if (!elementwise) continue;  // (NoDiff reductions: derivatives_reduce.cpp; random_bits: family_random.cpp)
    if (I.flags & NoDiff) table.define(Prim(i), {.jvp = &no_tangent});
    else if (I.family == Family::unary || I.family == Family::convert) table.define(Prim(i), {.jvp = &unary_jvp});
    else if (I.family == Family::binary) table.define(Prim(i), {.jvp = &binary_jvp});
    else table.define(Prim(i), {.jvp = &select_jvp});
  }
  table.define(Prim::neg, {.transpose = &neg_transpose});
  table.define(Prim::add, {.transpose = &add_sub_transpose});
  table.define(Prim::sub, {.transpose = &add_sub_transpose});
  table.define(Prim::mul, {.transpose = &mul_div_transpose});
  table.define(Prim::div, {.transpose = &mul_div_transpose});
  table.define(Prim::select, {.transpose = &select_transpose});
  table.define(Prim::convert, {.transpose = &convert_transpose});
}

}  // namespace nx::ops
