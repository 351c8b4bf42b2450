#include "vm/native/a64/float32_math.hpp"

#include <algorithm>
#include <bit>

#include "ops/kernels/f32_constants.hpp"

namespace rune::vm::native {

namespace a64 = asmjit::a64;
namespace f32 = nx::ops::kernels::f32;

void ConstantPool::load(int reg, std::uint32_t pattern) {
  if (!label_.isValid()) label_ = as_.newLabel();
  auto at = std::ranges::find(patterns_, pattern);
  if (at == patterns_.end()) at = patterns_.insert(at, pattern);
  as_.ldr(a64::v(std::uint32_t(reg)).q(), a64::ptr(label_, std::int32_t(at - patterns_.begin()) * 16));
}

void ConstantPool::load(int reg, float value) { load(reg, std::bit_cast<std::uint32_t>(value)); }

void ConstantPool::place() {
  if (patterns_.empty()) return;
  as_.align(asmjit::AlignMode::kData, 16);
  as_.bind(label_);
  for (const std::uint32_t& p : patterns_) as_.embedDataArray(asmjit::TypeId::kUInt32, &p, 1, 4);
}

namespace {

a64::Vec s4(int reg) { return a64::v(std::uint32_t(reg)).s4(); }
a64::Vec b16(int reg) { return a64::v(std::uint32_t(reg)).b16(); }

// f32_math.hpp's reduce_exp: e^y = 2^k (1 + m), k into its register, m
// into b's; a, b, d scratch, c each constant's.
void reduce_exp(a64::Assembler& as, ConstantPool& pool, int y, int k, int a, int b, int d, int c) {
  pool.load(c, f32::log2e);
  as.fmul(s4(k), s4(y), s4(c));
  // xsimd's nearbyint: v = |k|, (v + 2^23) - 2^23 where v < 2^23 (else v),
  // the sign put back
  pool.load(c, -0.f);
  as.and_(b16(a), b16(k), b16(c));
  as.eor(b16(k), b16(k), b16(a));
  pool.load(c, 8388608.f);
  as.fadd(s4(b), s4(k), s4(c));
  as.fsub(s4(b), s4(b), s4(c));
  as.fcmgt(s4(d), s4(c), s4(k));
  as.bsl(b16(d), b16(b), b16(k));
  as.eor(b16(k), b16(d), b16(a));
  // r = y - k ln2 by its head and its tail (xsimd's fnma on NEON: -k * c + r)
  as.fneg(s4(a), s4(k));
  pool.load(c, f32::ln2_head);
  as.fmul(s4(a), s4(a), s4(c));
  as.fadd(s4(a), s4(a), s4(y));
  as.fneg(s4(b), s4(k));
  pool.load(c, f32::ln2_tail);
  as.fmul(s4(b), s4(b), s4(c));
  as.fadd(s4(b), s4(b), s4(a));
  // expm1_tail(r) by Horner's fused steps (fmla: d + n * m), alternating
  // between d and a; then m = r + r^2 q(r)
  const auto& coefficient = f32::expm1_tail_coefficients;
  pool.load(d, coefficient[1]);
  pool.load(c, coefficient[0]);
  as.fmla(s4(d), s4(b), s4(c));
  pool.load(a, coefficient[2]);
  as.fmla(s4(a), s4(d), s4(b));
  pool.load(d, coefficient[3]);
  as.fmla(s4(d), s4(a), s4(b));
  pool.load(a, coefficient[4]);
  as.fmla(s4(a), s4(d), s4(b));
  as.fmul(s4(d), s4(b), s4(b));
  as.fmla(s4(b), s4(d), s4(a));
}

// d = the float 2^k of whole k in [-126, 127], made of its bits (c: scratch).
void power_of_two(a64::Assembler& as, ConstantPool& pool, int d, int k, int c) {
  as.fcvtzs(s4(d), s4(k));
  pool.load(c, std::uint32_t(127));
  as.add(s4(d), s4(d), s4(c));
  as.shl(s4(d), s4(d), 23);
}

}  // namespace

void emit_exp(a64::Assembler& as, ConstantPool& pool, int out, int x, std::span<const int, exp_scratch> t,
              const asmjit::Label& outside) {
  const int c = t[4];
  pool.load(c, f32::exp_lowest);  // (every lane in [lo, hi]: fcmge is false for NaN)
  as.fcmge(s4(t[0]), s4(x), s4(c));
  pool.load(c, f32::exp_highest);
  as.fcmge(s4(t[1]), s4(c), s4(x));
  as.and_(b16(t[0]), b16(t[0]), b16(t[1]));
  as.uminv(a64::s(std::uint32_t(t[0])), s4(t[0]));
  as.fmov(a64::w16, a64::s(std::uint32_t(t[0])));
  as.cmn(a64::w16, 1);
  as.b_ne(outside);
  const int k = t[0], m = t[2];
  reduce_exp(as, pool, x, k, t[1], m, t[3], c);
  pool.load(c, 1.f);
  as.fadd(s4(m), s4(m), s4(c));
  power_of_two(as, pool, t[3], k, c);
  as.fmul(s4(out), s4(m), s4(t[3]));
}

void emit_tanh(a64::Assembler& as, ConstantPool& pool, int out, int x, std::span<const int, tanh_scratch> t) {
  const int sign = t[0], y = t[2], k = t[1], m = t[4], scale = t[3], c = t[6];
  pool.load(c, -0.f);
  as.and_(b16(sign), b16(x), b16(c));
  as.fabs(s4(t[1]), s4(x));  // |x| * 2, clamped at 20 (fmin: NaN where either is)
  pool.load(c, 2.f);
  as.fmul(s4(t[1]), s4(t[1]), s4(c));
  pool.load(c, f32::tanh_clamp);
  as.fmin(s4(y), s4(c), s4(t[1]));
  reduce_exp(as, pool, y, k, t[3], m, t[5], c);
  power_of_two(as, pool, scale, k, c);
  const int e = t[1];  // e^(2|x|) - 1 = (scale - 1) + scale m
  pool.load(c, 1.f);
  as.fsub(s4(e), s4(scale), s4(c));
  as.fmla(s4(e), s4(scale), s4(m));
  pool.load(c, 2.f);
  as.fadd(s4(t[5]), s4(e), s4(c));
  as.fdiv(s4(out), s4(e), s4(t[5]));
  as.orr(b16(out), b16(out), b16(sign));
}

}  // namespace rune::vm::native
