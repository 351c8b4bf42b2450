#include "vm/native/a64/trip.hpp"

#include "vm/native/loops.hpp"

namespace rune::vm::native {

namespace a64 = asmjit::a64;
using asmjit::a64::CondCode;

// (at most 512: every home is then in reach of one load's or store's
// offset, bytes at most 4,095 from its frame's base)
const char* frames_refusal(std::size_t scalars) {
  return scalars > 512 ? "its frames hold more than 512 scalars (beyond the AArch64 emitter's offsets)" : nullptr;
}

a64::Mem home(const Frames& frames, std::int32_t key) { return a64::ptr(a64::x(frames.base(key)), frames.offset(key)); }

void address(a64::Assembler& as, const a64::Gp& to, const Frames& frames, std::int32_t key) {
  as.add(to, a64::x(frames.base(key)), frames.offset(key));
}

a64::Gp gp(std::uint32_t id, std::size_t size) { return size == 8 ? a64::Gp(a64::x(id)) : a64::Gp(a64::w(id)); }

void load_bytes(a64::Assembler& as, const a64::Gp& to, const a64::Mem& from, std::size_t size) {
  switch (size) {
    case 1: as.ldrb(to, from); break;
    case 2: as.ldrh(to, from); break;
    default: as.ldr(to, from); break;
  }
}

void store_bytes(a64::Assembler& as, const a64::Mem& to, const a64::Gp& from, std::size_t size) {
  switch (size) {
    case 1: as.strb(from, to); break;
    case 2: as.strh(from, to); break;
    default: as.str(from, to); break;
  }
}

a64::Vec fp(int reg, bool doubles) {
  return doubles ? a64::Vec(a64::d(std::uint32_t(reg))) : a64::Vec(a64::s(std::uint32_t(reg)));
}

a64::Vec lanes_of(int reg, bool doubles) {
  const a64::Vec v = a64::v(std::uint32_t(reg));
  return doubles ? a64::Vec(v.d2()) : a64::Vec(v.s4());
}

void move_immediate(a64::Assembler& as, const a64::Gp& to, std::uint64_t bits) {
  as.movz(to, bits & 0xffff);
  for (std::uint32_t shift = 16; shift < 64; shift += 16)
    if (const std::uint64_t part = (bits >> shift) & 0xffff) as.movk(to, part, a64::lsl(shift));
}

void call(a64::Assembler& as, const void* target) {
  move_immediate(as, a64::x16, reinterpret_cast<std::uint64_t>(target));
  as.blr(a64::x16);
}

// (112 bytes: the frame record, four general registers, eight halves of
// vector registers)
void enter(a64::Assembler& as) {
  as.stp(a64::x29, a64::x30, a64::ptr_pre(a64::sp, -112));
  as.mov(a64::x29, a64::sp);
  as.stp(a64::x19, a64::x20, a64::ptr(a64::sp, 16));
  as.stp(a64::x21, a64::x22, a64::ptr(a64::sp, 32));
  for (std::uint32_t k = 0; k < 4; ++k) as.stp(a64::d(8 + 2 * k), a64::d(9 + 2 * k), a64::ptr(a64::sp, std::int32_t(48 + 16 * k)));
}

void leave(a64::Assembler& as) {
  for (std::uint32_t k = 0; k < 4; ++k) as.ldp(a64::d(8 + 2 * k), a64::d(9 + 2 * k), a64::ptr(a64::sp, std::int32_t(48 + 16 * k)));
  as.ldp(a64::x21, a64::x22, a64::ptr(a64::sp, 32));
  as.ldp(a64::x19, a64::x20, a64::ptr(a64::sp, 16));
  as.ldp(a64::x29, a64::x30, a64::ptr_post(a64::sp, 112));
  as.ret(a64::x30);
}

a64::Vec A64Trip::whole(int reg, std::int32_t key) const {
  return frames_.packed(key) ? a64::Vec(a64::v(std::uint32_t(reg)).q()) : fp(reg, frames_.is_double(key));
}

// A home to load or store the whole value from: a packed row's 16 bytes
// through x9 where its offset is not a multiple of 16 (a q register's
// load scales its offset by 16).
a64::Mem A64Trip::whole_home(std::int32_t key) {
  if (!frames_.packed(key) || frames_.offset(key) % 16 == 0) return home(key);
  address(as_, a64::x9, frames_, key);
  return a64::ptr(a64::x9);
}

void A64Trip::fill(int reg, std::int32_t key) { as_.ldr(whole(reg, key), whole_home(key)); }

void A64Trip::spill(std::int32_t key, int reg) { as_.str(whole(reg, key), whole_home(key)); }

void A64Trip::copy(const a64::Mem& to, const a64::Mem& from, std::size_t size) {
  load_bytes(as_, gp(9, size), from, size);
  store_bytes(as_, to, gp(9, size), size);
}

// The reads [first, first + count) of event e done, and a register for its
// result: one whose value dies here may be it (a read before the write).
int A64Trip::result(std::size_t e, std::size_t first, std::size_t count) {
  const Event& ev = events_[e];
  for (std::size_t k = first; k < first + count; ++k) cache_.read(ev.reads[k], after(e, k));
  std::uint32_t keep = 0;
  for (std::size_t k = first; k < first + count; ++k) keep |= bit(cache_.find(ev.reads[k]));
  return cache_.allocate(keep);
}

// dst = a op b (or -a), float32 or float64. The operands keep their order
// (the VM's `s[a] + s[b]` is `fadd d, a, b`: the same NaN out of two).
void A64Trip::arithmetic(std::size_t e, const Instruction& in) {
  const bool negation = in.op == Op::neg_f64 || in.op == Op::neg_f32;
  const std::int32_t a = key(e, in.a), b = negation ? a : key(e, in.b);
  const bool doubles = frames_.is_double(a);
  const int xa = cache_.load(a, after(e, 0), bit(cache_.find(b)));
  const int xb = negation ? xa : cache_.load(b, after(e, 1), bit(xa));
  const int xd = result(e, 0, negation ? 1 : 2);
  const auto reg = frames_.packed(key(e, in.dst)) ? lanes_of : fp;
  const a64::Vec d = reg(xd, doubles), l = reg(xa, doubles), r = reg(xb, doubles);
  switch (in.op) {
    case Op::add_f64: case Op::add_f32: as_.fadd(d, l, r); break;
    case Op::sub_f64: case Op::sub_f32: as_.fsub(d, l, r); break;
    case Op::mul_f64: case Op::mul_f32: as_.fmul(d, l, r); break;
    case Op::div_f64: case Op::div_f32: as_.fdiv(d, l, r); break;
    default: as_.fneg(d, l); break;  // neg_f64, neg_f32
  }
  cache_.define(xd, key(e, in.dst), written(e, 0));
}

namespace {

// The condition under which a comparison is true after `cmp a, b` (signed
// or unsigned integers) or `fcmp a, b` (floats: an unordered pair sets C
// and V, so that only not_equal holds).
enum class Compared : std::uint8_t { signed_words, unsigned_words, floats };
CondCode condition(nx::ops::Prim p, Compared what) {
  using nx::ops::Prim;
  const bool is_unsigned = what == Compared::unsigned_words, is_float = what == Compared::floats;
  switch (p) {
    case Prim::less: return is_float ? CondCode::kMI : is_unsigned ? CondCode::kLO : CondCode::kLT;
    case Prim::less_equal: return is_float || is_unsigned ? CondCode::kLS : CondCode::kLE;
    case Prim::greater: return is_unsigned ? CondCode::kHI : CondCode::kGT;
    case Prim::greater_equal: return is_unsigned ? CondCode::kHS : CondCode::kGE;
    case Prim::equal: return CondCode::kEQ;
    default: return CondCode::kNE;
  }
}

}  // namespace

void A64Trip::truth(const a64::Gp& w, std::int32_t key) {
  as_.ldrb(w, home(key));
  as_.cmp(w, 0);
  as_.cset(w, asmjit::imm(CondCode::kNE));
}

// Integers and booleans at home: + - * of 32- and 64-bit integers (the row
// loops wrap, as the machine does), their comparisons, and and/or/xor of
// booleans. False: call out.
bool A64Trip::inline_integers(std::size_t e, const Instruction& in) {
  using nx::ops::Prim;
  const Prim p = in.prim;
  const std::int32_t a = key(e, in.a), b = key(e, in.b), out = key(e, in.dst);
  if (in.dtype == nx::DType::bool_ && (p == Prim::logical_and || p == Prim::logical_or || p == Prim::logical_xor)) {
    truth(a64::w9, a);
    truth(a64::w10, b);
    p == Prim::logical_and ? as_.and_(a64::w9, a64::w9, a64::w10)
    : p == Prim::logical_or ? as_.orr(a64::w9, a64::w9, a64::w10)
                            : as_.eor(a64::w9, a64::w9, a64::w10);
    as_.strb(a64::w9, home(out));
    return true;
  }
  if (!is_word(in.dtype) || (p != Prim::add && p != Prim::sub && p != Prim::mul && !is_comparison(p))) return false;
  const std::size_t size = nx::size_of(in.dtype);
  const a64::Gp l = gp(9, size), r = gp(10, size);
  load_bytes(as_, l, home(a), size);
  load_bytes(as_, r, home(b), size);
  if (!is_comparison(p)) {
    p == Prim::add ? as_.add(l, l, r) : p == Prim::sub ? as_.sub(l, l, r) : as_.mul(l, l, r);
    store_bytes(as_, home(out), l, size);
    return true;
  }
  const bool is_signed = in.dtype == nx::DType::int32 || in.dtype == nx::DType::int64;
  as_.cmp(l, r);
  as_.cset(a64::w9, asmjit::imm(condition(p, is_signed ? Compared::signed_words : Compared::unsigned_words)));
  as_.strb(a64::w9, home(out));
  return true;
}

bool A64Trip::compare(std::size_t e, const Instruction& in) {
  const std::int32_t a = key(e, in.a), b = key(e, in.b);
  const bool doubles = in.dtype == nx::DType::float64;
  const int xa = cache_.load(a, after(e, 0), bit(cache_.find(b)));
  const int xb = cache_.load(b, after(e, 1), bit(xa));
  as_.fcmp(fp(xa, doubles), fp(xb, doubles));
  as_.cset(a64::w9, asmjit::imm(condition(in.prim, Compared::floats)));
  as_.strb(a64::w9, home(key(e, in.dst)));
  cache_.read(a, after(e, 0));
  if (b != a) cache_.read(b, after(e, 1));
  return true;
}

// sqrt (correctly rounded: fsqrt) and abs (the sign bit cleared).
bool A64Trip::unary(std::size_t e, const Instruction& in) {
  if (!is_float(in.dtype) || (in.prim != nx::ops::Prim::sqrt && in.prim != nx::ops::Prim::abs)) return false;
  const bool doubles = in.dtype == nx::DType::float64;
  const int xa = cache_.load(key(e, in.a), after(e, 0), 0);
  const int xd = result(e, 0, 1);
  const auto reg = frames_.packed(key(e, in.dst)) ? lanes_of : fp;
  in.prim == nx::ops::Prim::sqrt ? as_.fsqrt(reg(xd, doubles), reg(xa, doubles)) : as_.fabs(reg(xd, doubles), reg(xa, doubles));
  cache_.define(xd, key(e, in.dst), written(e, 0));
  return true;
}

// cond ? a : b, the condition a boolean at home (any nonzero byte true).
bool A64Trip::select(std::size_t e, const Instruction& in) {
  const std::int32_t cond = key(e, in.a), a = key(e, in.b), b = key(e, in.c);
  if (!is_float(in.dtype) || frames_.type(cond) != nx::DType::bool_) return false;
  const bool doubles = in.dtype == nx::DType::float64;
  const int xa = cache_.load(a, after(e, 1), bit(cache_.find(b)));
  const int xb = cache_.load(b, after(e, 2), bit(xa));
  const int xd = result(e, 1, 2);
  as_.ldrb(a64::w9, home(cond));
  as_.cmp(a64::w9, 0);
  as_.fcsel(fp(xd, doubles), fp(xa, doubles), fp(xb, doubles), asmjit::imm(CondCode::kNE));
  cache_.define(xd, key(e, in.dst), written(e, 0));
  return true;
}

// Between float32 and float64 (fcvt, rounding to nearest as the VM's cast).
bool A64Trip::convert(std::size_t e, const Instruction& in) {
  const std::int32_t dst = key(e, in.dst);
  if (frames_.packed(key(e, in.a)) != frames_.packed(dst)) return lanes(e, in);
  if (!is_float(in.dtype) || !is_float(frames_.type(dst)) || in.dtype == frames_.type(dst)) return false;
  const bool from_doubles = in.dtype == nx::DType::float64;
  const int xa = cache_.load(key(e, in.a), after(e, 0), 0);
  const int xd = result(e, 0, 1);
  as_.fcvt(fp(xd, !from_doubles), fp(xa, from_doubles));
  cache_.define(xd, dst, written(e, 0));
  return true;
}

// Between a scalar and a packed row of its type (a fused kernel's row,
// fused_loop.cpp): a scalar repeated along the row (dup), or lane `aux` of
// the row. False: not those.
bool A64Trip::lanes(std::size_t e, const Instruction& in) {
  const std::int32_t dst = key(e, in.dst);
  if (!is_float(in.dtype) || frames_.type(dst) != in.dtype) return false;
  const bool doubles = in.dtype == nx::DType::float64;
  const int xa = cache_.load(key(e, in.a), after(e, 0), 0);
  const int xd = result(e, 0, 1);
  const a64::Vec v = a64::v(std::uint32_t(xa));
  if (frames_.packed(dst)) as_.dup(lanes_of(xd, doubles), doubles ? v.d(0) : v.s(0));
  else as_.dup(fp(xd, doubles), doubles ? v.d(std::uint32_t(in.aux)) : v.s(std::uint32_t(in.aux)));
  cache_.define(xd, dst, written(e, 0));
  return true;
}

// What the row loop would compute, emitted inline where its bits are an
// instruction's. False: call out.
bool A64Trip::inline_call(std::size_t e, const Instruction& in) {
  switch (in.op) {
    case Op::binary:
      if (!is_float(in.dtype)) return inline_integers(e, in);
      return is_comparison(in.prim) && compare(e, in);
    case Op::unary: return unary(e, in);
    case Op::select: return select(e, in);
    case Op::convert: return convert(e, in);
    default: return false;
  }
}

// The row loop on one element, its operands and result at home: every
// argument in a register (x0 .. x7), the target's address built in x16.
void A64Trip::call_out(std::size_t e, const Instruction& in) {
  calling_out(e);
  const auto at = [&](const a64::Gp& to, std::int32_t reg) { address(as_, to, frames_, key(e, reg)); };
  as_.mov(a64::x0, 1);
  at(a64::x1, in.a);
  as_.mov(a64::x2, a64::xzr);
  const void* target = nullptr;
  switch (in.op) {
    case Op::unary:
    case Op::convert:
      at(a64::x3, in.dst);
      target = reinterpret_cast<const void*>(in.row.unary);
      break;
    case Op::binary:
      at(a64::x3, in.b);
      as_.mov(a64::x4, a64::xzr);
      at(a64::x5, in.dst);
      target = reinterpret_cast<const void*>(in.row.binary);
      break;
    default:  // select: (1, cond, 0, a, 0, b, 0, out)
      at(a64::x3, in.b);
      as_.mov(a64::x4, a64::xzr);
      at(a64::x5, in.c);
      as_.mov(a64::x6, a64::xzr);
      at(a64::x7, in.dst);
      target = reinterpret_cast<const void*>(in.row.select);
      break;
  }
  if (comments_) as_.comment(("; the row loop of " + std::string(nx::ops::info(in.prim).name)).c_str());
  call(as_, target);
}

void A64Trip::move(const Move& m) {
  const nx::DType type = frames_.type(m.key);
  const std::size_t size = nx::size_of(type);
  if (!is_float(type)) {  // (never cached: at home, or in x10)
    const a64::Gp scratch = gp(10, size);
    if (m.from.kind == Place::scratch) store_bytes(as_, home(m.to.index), scratch, size);
    else if (m.to.kind == Place::scratch) load_bytes(as_, scratch, home(m.from.index), size);
    else copy(home(m.to.index), home(m.from.index), size);
    return;
  }
  const bool doubles = type == nx::DType::float64;  // (a carry: never a packed row)
  const auto reg = [&](const Place& p) { return fp(p.kind == Place::scratch ? 31 : p.index, doubles); };
  const bool from_register = m.from.kind != Place::home, to_register = m.to.kind != Place::home;
  if (from_register && to_register) as_.fmov(reg(m.to), reg(m.from));
  else if (to_register) as_.ldr(reg(m.to), home(m.from.index));
  else if (from_register) as_.str(reg(m.from), home(m.to.index));
  else copy(home(m.to.index), home(m.from.index), size);
}

}  // namespace rune::vm::native
