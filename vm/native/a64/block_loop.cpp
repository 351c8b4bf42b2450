// An elementwise kernel's block loop in machine code (AArch64, AAPCS64):
// the kernel's block code (block_code.hpp) for one block, each run one
// pass over the block in q registers (four float32 or two float64, as the
// NEON row loops the VM calls; the last elements one at a time in the
// same instructions' scalar forms), every other step a call of its row
// loop; float32 exp and tanh as the NEON row loops' batch code, their
// tail elements by their row loops. Negation and abs are fneg and fabs (the
// sign bit flipped or cleared, as the row loops do), so the sign masks the
// linear scan holds for x86-64 are left unloaded.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "vm/listing.hpp"
#include "vm/native/a64/float32_math.hpp"
#include "vm/native/a64/trip.hpp"
#include "vm/native/block_code.hpp"
#include "vm/native/block_loop.hpp"
#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"

namespace rune::vm::native {

namespace {

namespace a64 = asmjit::a64;
using nx::ops::Prim;

// General registers: the block's addresses, its length, the byte offset
// of the element, the end of the whole vectors (enter saves them); the
// slots' addresses in the pass in the caller's registers; x16 the scratch
// of a call and of a held value's address.
const a64::Gp at = a64::x19, length = a64::x20, offset = a64::x21, end = a64::x22;
constexpr std::uint32_t address_registers[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15};
// (v0 .. v30: v8 .. v15 are kept by enter; v31 is left free)
RunLimits limits() { return run_limits(31, int(std::size(address_registers)), exp_scratch, tanh_scratch); }

// The frame below enter's where a run computes exp or tanh: the address
// registers, a row loop's result and the vector registers, kept across
// that row loop's call.
constexpr std::int32_t gp_saved_at = 0, result_at = 128, vectors_saved_at = 144, frame_bytes = 144 + 31 * 16;

class BlockEmitter {
 public:
  BlockEmitter(a64::Assembler& as, const FusedKernel& m, const BlockCode& code, bool comments)
      : as_(as), m_(m), code_(code), comments_(comments), pool_(as) {}

  void loop() {
    enter(as_);
    if (code_.calls_in_runs) as_.sub(a64::sp, a64::sp, frame_bytes);
    as_.mov(at, a64::x0);
    as_.mov(length, a64::x1);
    for (const BlockCode::Segment& s : code_.segments) s.run ? run(s) : call_out(m_.steps[std::size_t(s.steps[0])]);
    if (code_.calls_in_runs) as_.add(a64::sp, a64::sp, frame_bytes);
    leave(as_);
    for (const Outside& o : outside_) {  // (out of line: exp's lanes that its row loop computes by the C library)
      as_.bind(o.at);
      if (comments_) as_.comment("; exp's lanes outside the range of normal results, by its row loop");
      call_on_lanes(o.lanes, false);
      as_.b(o.back);
    }
    pool_.place();
  }

 private:
  a64::Mem slot_address(std::int32_t slot) const { return a64::ptr(at, 8 * slot); }
  static a64::Gp address_register(std::size_t k) { return a64::x(address_registers[k]); }

  // A run: its slots' addresses and the values of one element in their
  // registers (repeated along the lanes), then the pass over whole vectors
  // and the last elements one at a time, the element counted in bytes.
  void run(const BlockCode::Segment& s) {
    const RunRegisters r = run_registers(m_, code_, s);
    const bool doubles = s.dtype == nx::DType::float64;
    const std::uint32_t shift = doubles ? 3 : 2;
    if (comments_) as_.comment(("; " + std::to_string(s.steps.size()) + " steps in vector registers").c_str());
    for (std::size_t k = 0; k < r.addressed.size(); ++k) as_.ldr(address_register(k), slot_address(r.addressed[k]));
    for (const RunRegisters::Held& h : r.held) {
      if (h.slot < 0) continue;  // (a sign mask: fneg and fabs need none)
      as_.ldr(a64::x16, slot_address(h.slot));
      as_.ldr(fp(h.reg, doubles), a64::ptr(a64::x16));
      const a64::Vec v = a64::v(std::uint32_t(h.reg));
      doubles ? as_.dup(v.d2(), v.d(0)) : as_.dup(v.s4(), v.s(0));
    }
    const asmjit::Label top = as_.newLabel(), last = as_.newLabel(), one = as_.newLabel(), done = as_.newLabel();
    as_.and_(end, length, doubles ? -2 : -4);
    as_.lsl(end, end, shift);
    as_.mov(offset, 0);
    as_.cmp(offset, end);
    as_.b_ge(last);
    as_.bind(top);
    pass(r, doubles, false);
    as_.add(offset, offset, 16);
    as_.cmp(offset, end);
    as_.b_lt(top);
    as_.bind(last);
    as_.lsl(end, length, shift);
    as_.cmp(offset, end);
    as_.b_ge(done);
    if (comments_) as_.comment("; the last elements, one at a time");
    as_.bind(one);
    pass(r, doubles, true);
    as_.add(offset, offset, doubles ? 8 : 4);
    as_.cmp(offset, end);
    as_.b_lt(one);
    as_.bind(done);
  }

  // One vector's (or one element's) worth of the run's steps.
  void pass(const RunRegisters& r, bool doubles, bool scalar) {
    const auto memory = [&](std::int32_t slot) {
      const std::size_t k = std::size_t(std::ranges::find(r.addressed, slot) - r.addressed.begin());
      return a64::ptr(address_register(k), offset);
    };
    const auto value = [&](int reg) {
      return scalar ? fp(reg, doubles) : lanes_of(reg, doubles);
    };
    const auto whole = [&](int reg) { return scalar ? fp(reg, doubles) : a64::Vec(a64::v(std::uint32_t(reg)).q()); };
    for (const RunRegisters::Step& s : r.steps) {
      const FusedKernel::Step& step = m_.steps[std::size_t(s.index)];
      if (s.a.load) as_.ldr(whole(s.a.reg), memory(s.a.slot));
      if (step.family == nx::ops::Family::binary && s.b.load) as_.ldr(whole(s.b.reg), memory(s.b.slot));
      if (comments_ && !scalar) as_.comment(("; " + step_text(m_, step)).c_str());
      const a64::Vec out = value(s.out), a = value(s.a.reg);
      switch (step.prim) {
        case Prim::add: as_.fadd(out, a, value(s.b.reg)); break;
        case Prim::sub: as_.fsub(out, a, value(s.b.reg)); break;
        case Prim::mul: as_.fmul(out, a, value(s.b.reg)); break;
        case Prim::div: as_.fdiv(out, a, value(s.b.reg)); break;
        case Prim::exp:
        case Prim::tanh: transcendental_step(r, s, scalar); break;
        case Prim::neg: as_.fneg(out, a); break;
        case Prim::abs: as_.fabs(out, a); break;
        default: as_.fsqrt(out, a); break;  // (the planner's last: sqrt)
      }
      if (s.write) as_.str(whole(s.out), memory(step.out));
    }
  }

  struct Outside {  // (exp's way out of line and back)
    asmjit::Label at, back;
    LanesCall lanes;
  };

  // exp or tanh of float32 in the run's registers: the vectors by the
  // row loops' batch code emitted (exp's lanes outside its range out of
  // line), the last elements one at a time by its row loop.
  void transcendental_step(const RunRegisters& r, const RunRegisters::Step& s, bool scalar) {
    const FusedKernel::Step& step = m_.steps[std::size_t(s.index)];
    const LanesCall lanes = lanes_call(m_, r, s);
    if (scalar) return call_on_lanes(lanes, true);
    if (step.prim == Prim::tanh)
      return emit_tanh(as_, pool_, s.out, s.a.reg, std::span<const int, tanh_scratch>(s.scratch.data(), tanh_scratch));
    const Outside o{as_.newLabel(), as_.newLabel(), lanes};
    emit_exp(as_, pool_, s.out, s.a.reg, std::span<const int, exp_scratch>(s.scratch.data(), exp_scratch), o.at);
    as_.bind(o.back);
    outside_.push_back(o);
  }

  // The step's row loop on the lanes of its operand's register (one lane:
  // the scalar pass), the registers the run holds kept across the call in
  // the frame.
  void call_on_lanes(const LanesCall& l, bool one) {
    const auto saved = [](int reg) { return a64::ptr(a64::sp, vectors_saved_at + 16 * reg); };
    const auto gp_saved = [](std::size_t k) { return a64::ptr(a64::sp, gp_saved_at + 8 * std::int32_t(k)); };
    for (std::size_t k = 0; k < l.addressed; ++k) as_.str(address_register(k), gp_saved(k));
    for (int reg = 0; reg < l.vectors; ++reg) as_.str(a64::v(std::uint32_t(reg)).q(), saved(reg));
    as_.mov(a64::x0, one ? 1 : 4);
    as_.add(a64::x1, a64::sp, vectors_saved_at + 16 * l.a);
    as_.mov(a64::x2, 1);
    as_.add(a64::x3, a64::sp, result_at);
    call(as_, reinterpret_cast<const void*>(l.step->row.unary));
    for (int reg = 0; reg < l.vectors; ++reg) as_.ldr(a64::v(std::uint32_t(reg)).q(), saved(reg));
    for (std::size_t k = 0; k < l.addressed; ++k) as_.ldr(address_register(k), gp_saved(k));
    if (one) {
      as_.ldr(a64::s(std::uint32_t(l.out)), a64::ptr(a64::sp, result_at));
    } else {
      as_.ldr(a64::v(std::uint32_t(l.out)).q(), a64::ptr(a64::sp, result_at));
    }
  }

  // Step s by the row loop the VM calls, with the VM's arguments
  // (vm/fused_kernel.cpp's run_step) in x0 .. x7: the block's length, each
  // operand's address and stride, the result's address.
  void call_out(const FusedKernel::Step& s) {
    if (comments_) as_.comment(("; " + step_text(m_, s) + ": the row loop of " + std::string(nx::ops::info(s.prim).name)).c_str());
    const auto operand = [&](std::uint32_t reg, std::int32_t slot) {
      as_.ldr(a64::x(reg), slot_address(slot));
      move_immediate(as_, a64::x(reg + 1), std::uint64_t(m_.places[std::size_t(slot)].stride));
    };
    as_.mov(a64::x0, length);
    operand(1, s.in[0]);
    const void* target = nullptr;
    switch (s.family) {
      case nx::ops::Family::binary:
        operand(3, s.in[1]);
        as_.ldr(a64::x5, slot_address(s.out));
        target = reinterpret_cast<const void*>(s.row.binary);
        break;
      case nx::ops::Family::select:
        operand(3, s.in[1]);
        operand(5, s.in[2]);
        as_.ldr(a64::x7, slot_address(s.out));
        target = reinterpret_cast<const void*>(s.row.select);
        break;
      default:  // unary, convert
        as_.ldr(a64::x3, slot_address(s.out));
        target = reinterpret_cast<const void*>(s.row.unary);
        break;
    }
    call(as_, target);
  }

  a64::Assembler& as_;
  const FusedKernel& m_;
  const BlockCode& code_;
  bool comments_;
  ConstantPool pool_;
  std::vector<Outside> outside_;
};

}  // namespace

const char* block_refusal(const FusedKernel& kernel) { return block_refusal(kernel, limits()); }

const void* emit_block(const FusedKernel& kernel, const char*& why) {
  return emit_blocks<a64::Assembler, BlockEmitter>(kernel, limits(), why);
}

std::string block_listing(const FusedKernel& kernel) { return blocks_listing<a64::Assembler, BlockEmitter>(kernel, limits()); }

}  // namespace rune::vm::native
