#include "vm/native/x86/vectors.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <string_view>

#include "ops/kernels/kernels.hpp"

namespace rune::vm::native {

namespace x86 = asmjit::x86;
namespace I = asmjit::x86::Inst;

Width simd_width() {
  const std::string_view arch = nx::ops::kernels::table().arch;
  return arch == "avx512" ? Width::avx512 : arch == "avx2" ? Width::avx : Width::sse;
}

int vector_bytes(Width w) { return w == Width::avx512 ? 64 : w == Width::avx ? 32 : 16; }

x86::Vec vector_register(Width w, int reg, bool scalar) {
  if (scalar || w == Width::sse) return x86::xmm(std::uint32_t(reg));
  return w == Width::avx ? x86::Vec(x86::ymm(std::uint32_t(reg))) : x86::Vec(x86::zmm(std::uint32_t(reg)));
}

x86::Mem ConstantPool::bits(std::uint32_t pattern) {
  if (!label_.isValid()) label_ = as_.newLabel();
  auto at = std::ranges::find(patterns_, pattern);
  if (at == patterns_.end()) at = patterns_.insert(at, pattern);
  return x86::ptr(label_, std::int32_t(at - patterns_.begin()) * bytes_, std::uint32_t(bytes_));
}

x86::Mem ConstantPool::number(float value) { return bits(std::bit_cast<std::uint32_t>(value)); }

void ConstantPool::place() {
  if (patterns_.empty()) return;
  as_.align(asmjit::AlignMode::kData, 64);
  as_.bind(label_);
  for (const std::uint32_t& p : patterns_) as_.embedDataArray(asmjit::TypeId::kUInt32, &p, 1, std::size_t(bytes_ / 4));
}

namespace {

bool is(const asmjit::Operand& o, const x86::Vec& v) { return o.isReg() && o.as<x86::Vec>().id() == v.id(); }

}  // namespace

void Float32Ops::binary(std::uint32_t sse, std::uint32_t vex, const Vec& d, const Vec& a, const Operand& b) {
  if (this->vex()) return void(as_.emit(vex, d, a, b));
  if (d.id() != a.id()) {
    assert(!is(b, d));
    as_.movaps(d.as<x86::Xmm>(), a.as<x86::Xmm>());
  }
  as_.emit(sse, d, b);
}

void Float32Ops::move(const Vec& d, const Operand& a) {
  if (is(a, d)) return;
  as_.emit(vex() ? I::kIdVmovaps : I::kIdMovaps, d, a);
}
void Float32Ops::add(const Vec& d, const Vec& a, const Operand& b) { binary(I::kIdAddps, I::kIdVaddps, d, a, b); }
void Float32Ops::sub(const Vec& d, const Vec& a, const Operand& b) { binary(I::kIdSubps, I::kIdVsubps, d, a, b); }
void Float32Ops::mul(const Vec& d, const Vec& a, const Operand& b) { binary(I::kIdMulps, I::kIdVmulps, d, a, b); }
void Float32Ops::div(const Vec& d, const Vec& a, const Operand& b) { binary(I::kIdDivps, I::kIdVdivps, d, a, b); }
void Float32Ops::min(const Vec& d, const Vec& a, const Operand& b) { binary(I::kIdMinps, I::kIdVminps, d, a, b); }
// (AVX-512F's logic on zmm is the integer forms': its float forms need AVX512DQ)
void Float32Ops::and_(const Vec& d, const Vec& a, const Operand& b) {
  binary(I::kIdAndps, width_ == Width::avx512 ? I::kIdVpandd : I::kIdVandps, d, a, b);
}
void Float32Ops::or_(const Vec& d, const Vec& a, const Operand& b) {
  binary(I::kIdOrps, width_ == Width::avx512 ? I::kIdVpord : I::kIdVorps, d, a, b);
}
void Float32Ops::xor_(const Vec& d, const Vec& a, const Operand& b) {
  binary(I::kIdXorps, width_ == Width::avx512 ? I::kIdVpxord : I::kIdVxorps, d, a, b);
}

// The fused forms: 132 (d = d * c + b), 213 (d = d * b + c), 231 (d = b * c + d),
// the second source a register, the third a register or memory.
namespace {

struct FusedForms {
  std::uint32_t f132, f213, f231;
};

// d = a * b + c (or its negated product's form) by whichever form d's
// aliasing allows.
void fused(x86::Assembler& as, const FusedForms& forms, const x86::Vec& d, const x86::Vec& a,
           const asmjit::Operand& b, const asmjit::Operand& c) {
  if (is(c, d)) return void(as.emit(forms.f231, d, a, b));
  if (is(b, d)) return void(as.emit(forms.f213, d, a, c));  // (a * b commutes)
  if (a.id() != d.id()) as.vmovaps(d, a);
  if (b.isReg()) return void(as.emit(forms.f213, d, b, c));
  assert(c.isReg());
  as.emit(forms.f132, d, c, b);
}

}  // namespace

void Float32Ops::fma(const Vec& d, const Vec& a, const Operand& b, const Operand& c) {
  if (vex()) return fused(as_, {I::kIdVfmadd132ps, I::kIdVfmadd213ps, I::kIdVfmadd231ps}, d, a, b, c);
  assert(!is(c, d));
  if (is(b, d)) {
    mul(d, d, a);  // (a * b commutes)
  } else {
    mul(d, a, b);
  }
  add(d, d, c);
}

void Float32Ops::fnma(const Vec& d, const Vec& a, const Operand& b, const Operand& c) {
  if (vex()) return fused(as_, {I::kIdVfnmadd132ps, I::kIdVfnmadd213ps, I::kIdVfnmadd231ps}, d, a, b, c);
  assert(!is(b, d) && !is(c, d));
  xor_(d, a, pool_.number(-0.f));  // (xsimd's SSE2 fnma: -a * b + c)
  mul(d, d, b);
  add(d, d, c);
}

void Float32Ops::round(const Vec& d, const Vec& a, const Vec (&scratch)[3]) {
  switch (width_) {
    case Width::avx512: return void(as_.vrndscaleps(d, a, 0));
    case Width::avx: return void(as_.vroundps(d, a, 0));
    case Width::sse: break;
  }
  // xsimd's nearbyint without SSE4.1: v = |a|, (v + 2^23) - 2^23 where v
  // < 2^23 (else v), the sign put back.
  const Vec &sign = scratch[0], &rounded = scratch[1], &small = scratch[2];
  const x86::Mem two_23 = pool_.number(8388608.f);
  and_(sign, a, pool_.number(-0.f));
  xor_(d, a, sign);
  add(rounded, d, two_23);
  sub(rounded, rounded, two_23);
  move(small, d);
  as_.cmpps(small.as<x86::Xmm>(), two_23, 1);  // (v < 2^23)
  and_(rounded, rounded, small);
  as_.andnps(small.as<x86::Xmm>(), d.as<x86::Xmm>());
  or_(rounded, rounded, small);
  xor_(d, rounded, sign);
}

void Float32Ops::scaled(const Vec& d, const Operand& v, const Vec& k) {
  assert(!is(v, d) && d.id() != k.id());
  if (width_ == Width::avx512) {
    if (v.isReg()) return void(as_.vscalefps(d, v.as<Vec>(), k));
    move(d, v);
    return void(as_.vscalefps(d, d, k));
  }
  const x86::Mem bias = pool_.bits(127);
  if (vex()) {
    as_.vcvttps2dq(d, k);
    as_.vpaddd(d, d, bias);
    as_.vpslld(d, d, 23);
  } else {
    as_.cvttps2dq(d.as<x86::Xmm>(), k.as<x86::Xmm>());
    as_.paddd(d.as<x86::Xmm>(), bias);
    as_.pslld(d.as<x86::Xmm>(), 23);
  }
  mul(d, d, v);  // (v * 2^k commutes)
}

void Float32Ops::unless_within(const Vec& x, float lo, float hi, const Vec (&scratch)[2],
                               const asmjit::Label& outside) {
  constexpr int less_equal = 2, greater_equal = 13;  // (ordered: false for NaN)
  switch (width_) {
    case Width::avx512:
      as_.vcmpps(x86::k1, x, pool_.number(hi), less_equal);
      as_.k(x86::k1).vcmpps(x86::k1, x, pool_.number(lo), greater_equal);
      as_.kortestw(x86::k1, x86::k1);  // (carry: all ones)
      break;
    case Width::avx:
      as_.vcmpps(scratch[0], x, pool_.number(hi), less_equal);
      as_.vcmpps(scratch[1], x, pool_.number(lo), greater_equal);
      as_.vandps(scratch[0], scratch[0], scratch[1]);
      as_.vpcmpeqd(scratch[1], scratch[1], scratch[1]);
      as_.vtestps(scratch[0], scratch[1]);  // (carry: no lane's sign clear in the first)
      break;
    case Width::sse: {
      const x86::Xmm in_lo = scratch[1].as<x86::Xmm>(), in_hi = scratch[0].as<x86::Xmm>();
      move(in_hi, x);
      as_.cmpps(in_hi, pool_.number(hi), less_equal);
      move(in_lo, pool_.number(lo));
      as_.cmpps(in_lo, x.as<x86::Xmm>(), less_equal);
      as_.andps(in_hi, in_lo);
      as_.push(x86::rax);  // (every general register may hold an address: one kept on the stack)
      as_.movmskps(x86::eax, in_hi);
      as_.cmp(x86::eax, 15);
      as_.pop(x86::rax);
      as_.jne(outside);
      return;
    }
  }
  as_.jnc(outside);
}

}  // namespace rune::vm::native
