#include "vm/native/x86/float32_math.hpp"

#include "ops/kernels/f32_constants.hpp"

namespace rune::vm::native {

namespace x86 = asmjit::x86;
namespace f32 = nx::ops::kernels::f32;

namespace {

// f32_math.hpp's reduce_exp: e^y = 2^k (1 + m), k and m into their
// registers (m's also a scratch of the rounding); r in s1 at the end.
void reduce_exp(Float32Ops& ops, ConstantPool& pool, const x86::Vec& y, const x86::Vec& k, const x86::Vec& m,
                const x86::Vec& s0, const x86::Vec& s1) {
  ops.mul(k, y, pool.number(f32::log2e));
  ops.round(k, k, {s0, s1, m});
  ops.fnma(s0, k, pool.number(f32::ln2_head), y);
  ops.fnma(s1, k, pool.number(f32::ln2_tail), s0);
  const auto& c = f32::expm1_tail_coefficients;  // (expm1_tail: Horner's steps)
  ops.move(m, pool.number(c[0]));
  ops.fma(m, m, s1, pool.number(c[1]));
  for (int j = 2; j < 5; ++j) ops.fma(m, m, s1, pool.number(c[j]));
  ops.mul(s0, s1, s1);
  ops.fma(m, s0, m, s1);  // r^2 q(r) + r
}

}  // namespace

void emit_exp(Float32Ops& ops, ConstantPool& pool, const x86::Vec& out, const x86::Vec& x,
              std::span<const x86::Vec, exp_scratch> t, const asmjit::Label& outside) {
  ops.unless_within(x, f32::exp_lowest, f32::exp_highest, {t[0], t[1]}, outside);
  const x86::Vec &k = t[0], &m = t[1];
  reduce_exp(ops, pool, x, k, m, t[2], t[3]);
  ops.add(m, m, pool.number(1.f));
  ops.scaled(out, m, k);
}

void emit_tanh(Float32Ops& ops, ConstantPool& pool, const x86::Vec& out, const x86::Vec& x,
               std::span<const x86::Vec, tanh_scratch> t) {
  const x86::Vec &sign = t[0], &y = t[2], &k = t[1], &m = t[3], &scale = t[4], &e = t[5];
  ops.and_(sign, x, pool.number(-0.f));
  ops.and_(t[1], x, pool.bits(0x7fffffff));  // |x| * 2, clamped at 20 (NaN kept: min's second operand)
  ops.mul(t[1], t[1], pool.number(2.f));
  ops.move(y, pool.number(f32::tanh_clamp));
  ops.min(y, y, t[1]);
  reduce_exp(ops, pool, y, k, m, t[4], t[5]);
  ops.scaled(scale, pool.number(1.f), k);
  const x86::Vec& scale_less_one = t[1];
  ops.sub(scale_less_one, scale, pool.number(1.f));
  ops.fma(e, scale, m, scale_less_one);  // e^(2|x|) - 1
  const x86::Vec& e_plus_two = t[1];
  ops.add(e_plus_two, e, pool.number(2.f));
  ops.div(out, e, e_plus_two);
  ops.or_(out, out, sign);
}

}  // namespace rune::vm::native
