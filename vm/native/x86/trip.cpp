#include "vm/native/x86/trip.hpp"

#include "vm/native/loops.hpp"

namespace rune::vm::native {

namespace x86 = asmjit::x86;

x86::Gp gp(std::uint32_t id, std::size_t size) {
  switch (size) {
    case 1: return x86::gpb_lo(id);
    case 2: return x86::gpw(id);
    case 4: return x86::gpd(id);
    default: return x86::gpq(id);
  }
}

const char* frames_refusal(std::size_t) { return nullptr; }

x86::Mem slot(const Frames& frames, std::int32_t key) { return x86::ptr(x86::gpq(frames.base(key)), frames.offset(key)); }

x86::Mem home(const Frames& frames, std::int32_t key) {
  x86::Mem m = slot(frames, key);
  m.setSize(frames.width(key));
  return m;
}

void move_scalar(x86::Assembler& as, const asmjit::Operand_& to, const asmjit::Operand_& from, bool doubles) {
  as.emit(doubles ? x86::Inst::kIdMovsd : x86::Inst::kIdMovss, to, from);
}

void move_value(x86::Assembler& as, const Frames& frames, std::int32_t key, const asmjit::Operand_& to,
                const asmjit::Operand_& from) {
  const bool doubles = frames.is_double(key);
  if (frames.packed(key)) as.emit(doubles ? x86::Inst::kIdMovupd : x86::Inst::kIdMovups, to, from);
  else move_scalar(as, to, from, doubles);
}

void X86Trip::fill(int reg, std::int32_t key) { move_value(as_, frames_, key, x86::xmm(std::uint32_t(reg)), home(key)); }

void X86Trip::spill(std::int32_t key, int reg) { move_value(as_, frames_, key, home(key), x86::xmm(std::uint32_t(reg))); }

namespace {

// The SSE instruction of a float + - * /: scalar (sd, ss) or packed (pd, ps).
std::uint32_t arithmetic_id(Op op, bool packed) {
  namespace I = asmjit::x86::Inst;
  switch (op) {
    case Op::add_f64: return packed ? I::kIdAddpd : I::kIdAddsd;
    case Op::sub_f64: return packed ? I::kIdSubpd : I::kIdSubsd;
    case Op::mul_f64: return packed ? I::kIdMulpd : I::kIdMulsd;
    case Op::div_f64: return packed ? I::kIdDivpd : I::kIdDivsd;
    case Op::add_f32: return packed ? I::kIdAddps : I::kIdAddss;
    case Op::sub_f32: return packed ? I::kIdSubps : I::kIdSubss;
    case Op::mul_f32: return packed ? I::kIdMulps : I::kIdMulss;
    default: return packed ? I::kIdDivps : I::kIdDivss;  // div_f32
  }
}

}  // namespace

// dst = a op b (or -a), float32 or float64, in xmm registers: dst takes
// a's register when a dies here. The operands keep their order (the VM's
// `s[a] + s[b]` is `addsd a, b` when optimized: the same NaN out of two).
void X86Trip::arithmetic(std::size_t e, const Instruction& in) {
  const bool negation = in.op == Op::neg_f64 || in.op == Op::neg_f32;
  const std::int32_t a = key(e, in.a), b = negation ? -1 : key(e, in.b), dst = key(e, in.dst);
  const std::int32_t a_next = after(e, 0), b_next = negation ? never : after(e, 1);
  const bool packed = frames_.packed(dst);
  const int xb_cached = negation ? -1 : cache_.find(b);
  const int xa = cache_.load(a, a_next, bit(xb_cached));
  // (a packed operand from memory would have to be 16-byte aligned: b is loaded)
  const int xb = negation ? -1 : packed ? cache_.load(b, b_next, bit(xa)) : cache_.find(b);
  const int xd = a_next == never ? xa : cache_.allocate(bit(xa) | bit(xb));
  const x86::Xmm d = x86::xmm(std::uint32_t(xd));
  if (xd != xa) as_.movaps(d, x86::xmm(std::uint32_t(xa)));
  if (negation) {
    flip_sign(d, in.op == Op::neg_f64, packed);
  } else {  // (b from its home when not cached: a scalar's slot needs no alignment)
    const asmjit::Operand r = xb < 0 ? asmjit::Operand(home(b)) : asmjit::Operand(x86::xmm(std::uint32_t(xb)));
    as_.emit(arithmetic_id(in.op, packed), d, r);
  }
  if (xd != xa) cache_.read(a, a_next);
  if (!negation && (b != a || xd != xa)) cache_.read(b, b_next);
  cache_.define(xd, dst, written(e, 0));
}

void X86Trip::flip_sign(const x86::Xmm& d, bool doubles, bool packed) {
  const x86::Xmm mask = lane_mask(std::uint64_t(1) << 63, std::uint32_t(1) << 31, doubles, packed);
  doubles ? as_.xorpd(d, mask) : as_.xorps(d, mask);
}

// xmm15 holding a float64's or float32's bit mask in its first lane, or in
// every lane of a packed row.
x86::Xmm X86Trip::lane_mask(std::uint64_t mask64, std::uint32_t mask32, bool doubles, bool packed) {
  const x86::Xmm mask = x86::xmm15;
  if (doubles) {
    as_.mov(x86::rax, asmjit::imm(mask64));
    as_.movq(mask, x86::rax);
    if (packed) as_.unpcklpd(mask, mask);
  } else {
    as_.mov(x86::eax, asmjit::imm(mask32));
    as_.movd(mask, x86::eax);
    if (packed) as_.shufps(mask, mask, 0);
  }
  return mask;
}

// Integers and booleans at home: + - * of 32- and 64-bit integers (the row
// loops wrap, as the machine does), their comparisons, and and/or/xor of
// booleans (any nonzero byte true, as the row loops read them). False:
// call out.
bool X86Trip::inline_integers(std::size_t e, const Instruction& in) {
  using nx::ops::Prim;
  const Prim p = in.prim;
  const x86::Mem a = home(key(e, in.a)), b = home(key(e, in.b)), out = home(key(e, in.dst));
  if (in.dtype == nx::DType::bool_ && (p == Prim::logical_and || p == Prim::logical_or || p == Prim::logical_xor)) {
    as_.cmp(a, 0);
    as_.setne(x86::al);
    as_.cmp(b, 0);
    as_.setne(x86::dl);
    p == Prim::logical_and ? as_.and_(x86::al, x86::dl) : p == Prim::logical_or ? as_.or_(x86::al, x86::dl)
                                                                                : as_.xor_(x86::al, x86::dl);
    as_.mov(out, x86::al);
    return true;
  }
  if (!is_word(in.dtype) || (p != Prim::add && p != Prim::sub && p != Prim::mul && !is_comparison(p))) return false;
  const x86::Gp r = gp(x86::Gp::kIdAx, nx::size_of(in.dtype));
  as_.mov(r, a);
  if (!is_comparison(p)) {
    p == Prim::add ? as_.add(r, b) : p == Prim::sub ? as_.sub(r, b) : as_.imul(r, b);
    as_.mov(out, r);
    return true;
  }
  as_.cmp(r, b);
  const bool is_signed = in.dtype == nx::DType::int32 || in.dtype == nx::DType::int64;
  switch (p) {
    case Prim::less: is_signed ? as_.setl(out) : as_.setb(out); break;
    case Prim::less_equal: is_signed ? as_.setle(out) : as_.setbe(out); break;
    case Prim::greater: is_signed ? as_.setg(out) : as_.seta(out); break;
    case Prim::greater_equal: is_signed ? as_.setge(out) : as_.setae(out); break;
    case Prim::equal: as_.sete(out); break;
    default: as_.setne(out); break;
  }
  return true;
}

// What the row loop would compute, emitted inline where its bits are an
// instruction's: float sqrt and abs, comparisons, a select and a
// conversion between float32 and float64 (SSE2), and integer arithmetic
// (inline_integers).
// False: call out.
bool X86Trip::inline_call(std::size_t e, const Instruction& in) {
  using nx::ops::Prim;
  switch (in.op) {
    case Op::binary: {
      const Prim p = in.prim;
      if (!is_float(in.dtype)) return inline_integers(e, in);
      if (!is_comparison(p)) return false;
      const std::int32_t a = key(e, in.a), b = key(e, in.b);
      const int xa = cache_.load(a, after(e, 0), bit(cache_.find(b)));
      const int xb = cache_.load(b, after(e, 1), bit(xa));
      const x86::Xmm l = x86::xmm(std::uint32_t(xa)), r = x86::xmm(std::uint32_t(xb));
      const bool doubles = in.dtype == nx::DType::float64;
      const auto compare = [&](const x86::Xmm& u, const x86::Xmm& v) { doubles ? as_.ucomisd(u, v) : as_.ucomiss(u, v); };
      // (unordered operands set ZF, PF and CF: only not_equal is true)
      const x86::Mem out = home(key(e, in.dst));
      switch (p) {
        case Prim::less: compare(r, l), as_.seta(out); break;
        case Prim::less_equal: compare(r, l), as_.setae(out); break;
        case Prim::greater: compare(l, r), as_.seta(out); break;
        case Prim::greater_equal: compare(l, r), as_.setae(out); break;
        default: {  // equal: ordered and ZF; not_equal: unordered or not ZF
          const bool equal = p == Prim::equal;
          compare(l, r);
          equal ? as_.sete(x86::al) : as_.setne(x86::al);
          equal ? as_.setnp(x86::dl) : as_.setp(x86::dl);
          equal ? as_.and_(x86::al, x86::dl) : as_.or_(x86::al, x86::dl);
          as_.mov(out, x86::al);
          break;
        }
      }
      cache_.read(a, after(e, 0));
      if (b != a) cache_.read(b, after(e, 1));
      return true;
    }
    case Op::unary: {  // sqrt (correctly rounded: sqrtsd) and abs (the sign bit cleared)
      if (!is_float(in.dtype) || (in.prim != Prim::sqrt && in.prim != Prim::abs)) return false;
      const std::int32_t a = key(e, in.a);
      const bool doubles = in.dtype == nx::DType::float64, packed = frames_.packed(key(e, in.dst));
      const int xa = cache_.load(a, after(e, 0), 0);
      const int xd = after(e, 0) == never ? xa : cache_.allocate(bit(xa));
      const x86::Xmm d = x86::xmm(std::uint32_t(xd)), s = x86::xmm(std::uint32_t(xa));
      if (in.prim == Prim::sqrt) {
        if (packed) doubles ? as_.sqrtpd(d, s) : as_.sqrtps(d, s);
        else doubles ? as_.sqrtsd(d, s) : as_.sqrtss(d, s);
      } else {
        if (xd != xa) as_.movaps(d, s);
        const x86::Xmm mask = lane_mask(~(std::uint64_t(1) << 63), ~(std::uint32_t(1) << 31), doubles, packed);
        doubles ? as_.andpd(d, mask) : as_.andps(d, mask);
      }
      if (xd != xa) cache_.read(a, after(e, 0));
      cache_.define(xd, key(e, in.dst), written(e, 0));
      return true;
    }
    case Op::select: {
      const std::int32_t cond = key(e, in.a), a = key(e, in.b), b = key(e, in.c);
      if (!is_float(in.dtype) || frames_.type(cond) != nx::DType::bool_) return false;
      const int xa = cache_.load(a, after(e, 1), bit(cache_.find(b)));
      const int xb = cache_.load(b, after(e, 2), bit(xa));
      const int xd = cache_.allocate(bit(xa) | bit(xb));
      const x86::Xmm d = x86::xmm(std::uint32_t(xd));
      const asmjit::Label chosen = as_.newLabel();
      as_.movaps(d, x86::xmm(std::uint32_t(xb)));
      as_.cmp(home(cond), 0);  // (any nonzero byte is true, as the row loop reads it)
      as_.je(chosen);
      as_.movaps(d, x86::xmm(std::uint32_t(xa)));
      as_.bind(chosen);
      cache_.read(a, after(e, 1));
      if (b != a) cache_.read(b, after(e, 2));
      cache_.define(xd, key(e, in.dst), written(e, 0));
      return true;
    }
    case Op::convert: {
      const std::int32_t a = key(e, in.a), dst = key(e, in.dst);
      if (frames_.packed(a) != frames_.packed(dst)) return lanes(e, in);
      if (!is_float(in.dtype) || !is_float(frames_.type(dst)) || in.dtype == frames_.type(dst)) return false;
      const int xa = cache_.load(a, after(e, 0), 0);
      const int xd = cache_.allocate(bit(xa));
      const x86::Xmm d = x86::xmm(std::uint32_t(xd)), s = x86::xmm(std::uint32_t(xa));
      as_.xorps(d, d);  // (the conversion writes the low element alone: no wait on d's past)
      if (in.dtype == nx::DType::float64) as_.cvtsd2ss(d, s);
      else as_.cvtss2sd(d, s);
      cache_.read(a, after(e, 0));
      cache_.define(xd, dst, written(e, 0));
      return true;
    }
    default: return false;
  }
}

// Between a scalar and a packed row of its type (a fused kernel's row,
// fused_loop.cpp): a scalar repeated along the row, or lane `aux` of the
// row. False: not those.
bool X86Trip::lanes(std::size_t e, const Instruction& in) {
  const std::int32_t a = key(e, in.a), dst = key(e, in.dst);
  if (!is_float(in.dtype) || frames_.type(dst) != in.dtype) return false;
  const bool doubles = in.dtype == nx::DType::float64;
  const int xa = cache_.load(a, after(e, 0), 0);
  const int xd = after(e, 0) == never ? xa : cache_.allocate(bit(xa));  // (a row's lane 0 where it dies: no code)
  const x86::Xmm d = x86::xmm(std::uint32_t(xd));
  if (xd != xa) as_.movaps(d, x86::xmm(std::uint32_t(xa)));
  if (frames_.packed(dst)) {
    doubles ? as_.unpcklpd(d, d) : as_.shufps(d, d, 0);
  } else if (in.aux > 0) {
    doubles ? as_.unpckhpd(d, d) : as_.shufps(d, d, std::uint32_t(in.aux));
  }
  if (xd != xa) cache_.read(a, after(e, 0));
  cache_.define(xd, dst, written(e, 0));
  return true;
}

// The row loop on one element, its operands and result at home.
void X86Trip::call_out(std::size_t e, const Instruction& in) {
  calling_out(e);
  const auto at = [&](std::int32_t reg) { return slot(frames_, key(e, reg)); };
  as_.mov(x86::edi, 1);
  as_.lea(x86::rsi, at(in.a));
  as_.xor_(x86::edx, x86::edx);
  const void* target = nullptr;
  switch (in.op) {
    case Op::unary:
    case Op::convert:
      as_.lea(x86::rcx, at(in.dst));
      target = reinterpret_cast<const void*>(in.row.unary);
      break;
    case Op::binary:
      as_.lea(x86::rcx, at(in.b));
      as_.xor_(x86::r8d, x86::r8d);
      as_.lea(x86::r9, at(in.dst));
      target = reinterpret_cast<const void*>(in.row.binary);
      break;
    default:  // select: (1, cond, 0, a, 0, b, 0, out), the last two on the stack
      as_.lea(x86::rcx, at(in.b));
      as_.xor_(x86::r8d, x86::r8d);
      as_.lea(x86::r9, at(in.c));
      as_.mov(x86::qword_ptr(x86::rsp), 0);
      as_.lea(x86::rax, at(in.dst));
      as_.mov(x86::qword_ptr(x86::rsp, 8), x86::rax);
      target = reinterpret_cast<const void*>(in.row.select);
      break;
  }
  if (comments_) as_.comment(("; the row loop of " + std::string(nx::ops::info(in.prim).name)).c_str());
  as_.mov(x86::rax, asmjit::imm(target));
  as_.call(x86::rax);
}

void X86Trip::copy(const x86::Mem& to, const x86::Mem& from, std::size_t size) {
  const x86::Gp via = gp(x86::Gp::kIdAx, size);
  as_.mov(via, from);
  as_.mov(to, via);
}

void X86Trip::move(const Move& m) {
  const nx::DType type = frames_.type(m.key);
  const std::size_t size = nx::size_of(type);
  const auto memory = [&](const Place& p) {
    x86::Mem at = slot(frames_, p.index);
    at.setSize(std::uint32_t(size));
    return at;
  };
  if (!is_float(type)) {  // (never cached: at home, or in rdx)
    const x86::Gp rdx = gp(x86::Gp::kIdDx, size);
    if (m.from.kind == Place::scratch) as_.mov(memory(m.to), rdx);
    else if (m.to.kind == Place::scratch) as_.mov(rdx, memory(m.from));
    else copy(memory(m.to), memory(m.from), size);
    return;
  }
  const auto xmm = [](const Place& p) { return p.kind == Place::scratch ? x86::xmm15 : x86::xmm(std::uint32_t(p.index)); };
  const bool from_register = m.from.kind != Place::home, to_register = m.to.kind != Place::home;
  const bool doubles = type == nx::DType::float64;
  if (from_register && to_register) as_.movaps(xmm(m.to), xmm(m.from));
  else if (to_register) move_scalar(as_, xmm(m.to), memory(m.from), doubles);
  else if (from_register) move_scalar(as_, memory(m.to), xmm(m.from), doubles);
  else copy(memory(m.to), memory(m.from), size);
}

}  // namespace rune::vm::native
