// An elementwise kernel's block loop in machine code (x86-64, System V):
// the kernel's block code (block_code.hpp) for one block, each run one
// pass over the block in the vector registers of the process's SIMD level
// (xmm for SSE2, ymm for AVX2, zmm for AVX-512, as the row loops the VM
// calls; the last elements one at a time in the same instructions'
// scalar forms; float32 exp and tanh there by their row loops), every
// other step a call of its row loop.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include <asmjit/x86.h>

#include "vm/listing.hpp"
#include "vm/native/block_code.hpp"
#include "vm/native/block_loop.hpp"
#include "vm/native/x86/float32_math.hpp"
#include "vm/native/x86/vectors.hpp"
#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;
namespace I = asmjit::x86::Inst;
using nx::ops::Prim;

// General registers: the block's addresses, its length, the element, the
// end of the whole vectors (and a scratch before the pass), all kept by
// callees; the slots' addresses in the pass in the others.
const x86::Gp at = x86::rbx, length = x86::r12, element = x86::r13, vectors_end = x86::r14;
constexpr x86::Gp address_registers[] = {x86::rax, x86::rcx, x86::rdx, x86::rsi, x86::rdi, x86::r8,
                                         x86::r9,  x86::r10, x86::r11, x86::r15, x86::rbp};
constexpr x86::Gp callee_saved[] = {x86::rbx, x86::rbp, x86::r12, x86::r13, x86::r14, x86::r15};
constexpr std::size_t caller_saved_addresses = 9;  // (rax .. r11)

// (16 vector registers: those above xmm15 have no VEX form, which the
// scalar forms use)
RunLimits limits() { return run_limits(16, int(std::size(address_registers)), exp_scratch, tanh_scratch); }

// The loop's frame: a select's two stack arguments; where a run computes
// exp or tanh, also the caller-saved address registers, a row loop's
// result and the vector registers, kept across that row loop's call.
constexpr int gp_saved_at = 16, result_at = 96, vectors_saved_at = 160;
constexpr int frame_bytes(bool calls_in_runs) { return calls_in_runs ? vectors_saved_at + 16 * 64 + 8 : 24; }

// An instruction's id by what it computes, its operands' type and its form.
struct Form {
  Width width;
  bool doubles, scalar;
  bool vex() const { return width != Width::sse; }
  std::uint32_t pick(std::uint32_t ps, std::uint32_t pd, std::uint32_t ss, std::uint32_t sd) const {
    return scalar ? (doubles ? sd : ss) : (doubles ? pd : ps);
  }
  std::uint32_t move() const {
    return vex() ? pick(I::kIdVmovups, I::kIdVmovupd, I::kIdVmovss, I::kIdVmovsd)
                 : pick(I::kIdMovups, I::kIdMovupd, I::kIdMovss, I::kIdMovsd);
  }
  std::uint32_t stream() const {  // (whole vectors)
    return vex() ? (doubles ? I::kIdVmovntpd : I::kIdVmovntps) : (doubles ? I::kIdMovntpd : I::kIdMovntps);
  }
  std::uint32_t arithmetic(Prim p) const {
    if (vex()) switch (p) {
        case Prim::add: return pick(I::kIdVaddps, I::kIdVaddpd, I::kIdVaddss, I::kIdVaddsd);
        case Prim::sub: return pick(I::kIdVsubps, I::kIdVsubpd, I::kIdVsubss, I::kIdVsubsd);
        case Prim::mul: return pick(I::kIdVmulps, I::kIdVmulpd, I::kIdVmulss, I::kIdVmulsd);
        default: return pick(I::kIdVdivps, I::kIdVdivpd, I::kIdVdivss, I::kIdVdivsd);
      }
    switch (p) {
      case Prim::add: return pick(I::kIdAddps, I::kIdAddpd, I::kIdAddss, I::kIdAddsd);
      case Prim::sub: return pick(I::kIdSubps, I::kIdSubpd, I::kIdSubss, I::kIdSubsd);
      case Prim::mul: return pick(I::kIdMulps, I::kIdMulpd, I::kIdMulss, I::kIdMulsd);
      default: return pick(I::kIdDivps, I::kIdDivpd, I::kIdDivss, I::kIdDivsd);
    }
  }
  std::uint32_t sqrt() const {
    return vex() ? pick(I::kIdVsqrtps, I::kIdVsqrtpd, I::kIdVsqrtss, I::kIdVsqrtsd)
                 : pick(I::kIdSqrtps, I::kIdSqrtpd, I::kIdSqrtss, I::kIdSqrtsd);
  }
  // The sign bit flipped (neg) or cleared (abs) by a mask: AVX-512's
  // integer forms on zmm (its float forms need AVX512DQ).
  std::uint32_t sign(bool clear) const {
    if (width == Width::avx512 && !scalar)
      return clear ? (doubles ? I::kIdVpandq : I::kIdVpandd) : (doubles ? I::kIdVpxorq : I::kIdVpxord);
    if (vex()) return clear ? (doubles ? I::kIdVandpd : I::kIdVandps) : (doubles ? I::kIdVxorpd : I::kIdVxorps);
    return clear ? (doubles ? I::kIdAndpd : I::kIdAndps) : (doubles ? I::kIdXorpd : I::kIdXorps);
  }
};

class BlockEmitter {
 public:
  BlockEmitter(x86::Assembler& as, const FusedKernel& m, const BlockCode& code, bool comments)
      : as_(as),
        m_(m),
        code_(code),
        width_(simd_width()),
        comments_(comments),
        pool_(as, width_),
        ops_(as, pool_, width_) {}

  void loop() {
    const int frame = frame_bytes(code_.calls_in_runs);  // (rsp 16-byte aligned at calls)
    for (const x86::Gp& saved : callee_saved) as_.push(saved);
    as_.sub(x86::rsp, frame);
    as_.mov(at, x86::rdi);
    as_.mov(length, x86::rsi);
    for (const BlockCode::Segment& s : code_.segments) s.run ? run(s) : call_out(m_.steps[std::size_t(s.steps[0])]);
    if (width_ != Width::sse) as_.vzeroupper();
    as_.add(x86::rsp, frame);
    for (std::size_t k = std::size(callee_saved); k-- > 0;) as_.pop(callee_saved[k]);
    as_.ret();
    for (const Outside& o : outside_) {  // (out of line: exp's lanes that its row loop computes by the C library)
      as_.bind(o.at);
      if (comments_) as_.comment("; exp's lanes outside the range of normal results, by its row loop");
      call_on_lanes(o.lanes, false);
      as_.jmp(o.back);
    }
    pool_.place();
  }

 private:
  x86::Mem slot_address(std::int32_t slot) const { return x86::qword_ptr(at, 8 * slot); }

  x86::Vec vector(int reg, bool scalar) const { return vector_register(width_, reg, scalar); }

  // A run: its slots' addresses, the values of one element and the masks
  // in their registers, then the pass over whole vectors and the last
  // elements one at a time.
  void run(const BlockCode::Segment& s) {
    const RunRegisters r = run_registers(m_, code_, s);
    const bool doubles = s.dtype == nx::DType::float64;
    const std::int64_t lanes = (width_ == Width::avx512 ? 64 : width_ == Width::avx ? 32 : 16) / (doubles ? 8 : 4);
    if (comments_) as_.comment(("; " + std::to_string(s.steps.size()) + " steps in vector registers").c_str());
    for (std::size_t k = 0; k < r.addressed.size(); ++k) as_.mov(address_registers[k], slot_address(r.addressed[k]));
    for (const RunRegisters::Held& h : r.held) hold(h, doubles);
    const asmjit::Label last = as_.newLabel(), one = as_.newLabel(), done = as_.newLabel();
    as_.mov(vectors_end, length);
    as_.and_(vectors_end, -lanes);
    as_.xor_(element.r32(), element.r32());
    as_.cmp(element, vectors_end);
    as_.jge(last);
    const Form vectors{width_, doubles, false};
    if (streams(r)) {  // (past the caches where every streamed result is aligned, as the row loops do)
      const asmjit::Label other = as_.newLabel();
      for (std::size_t k = 0; k < r.addressed.size(); ++k)
        if (code_.streamed[std::size_t(r.addressed[k])]) {
          as_.test(address_registers[k], asmjit::imm(vector(0, false).size() - 1));
          as_.jnz(other);
        }
      whole_vectors(r, vectors, lanes, true);
      as_.sfence();  // (streaming stores are weakly ordered: published before other threads read)
      as_.jmp(last);
      as_.bind(other);
    }
    whole_vectors(r, vectors, lanes, false);
    as_.bind(last);
    as_.cmp(element, length);
    as_.jge(done);
    if (comments_) as_.comment("; the last elements, one at a time");
    as_.bind(one);
    pass(r, Form{width_, doubles, true});
    as_.inc(element);
    as_.cmp(element, length);
    as_.jl(one);
    as_.bind(done);
  }

  bool streams(const RunRegisters& r) const {
    return std::ranges::any_of(r.steps, [&](const RunRegisters::Step& s) {
      return s.write && code_.streamed[std::size_t(m_.steps[std::size_t(s.index)].out)];
    });
  }

  // The pass over the whole vectors [element, vectors_end), its results
  // streamed past the caches or not.
  void whole_vectors(const RunRegisters& r, const Form& form, std::int64_t lanes, bool streaming) {
    const asmjit::Label top = as_.newLabel();
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    pass(r, form, streaming);
    as_.add(element, lanes);
    as_.cmp(element, vectors_end);
    as_.jl(top);
  }

  // A value of one element repeated in every lane of its register, or a
  // mask of the sign bit (flip) or of the others (clear).
  void hold(const RunRegisters::Held& h, bool doubles) {
    const x86::Vec v = vector(h.reg, false);
    const x86::Xmm low = x86::xmm(std::uint32_t(h.reg));
    if (h.slot >= 0) {
      as_.mov(vectors_end, slot_address(h.slot));
      const x86::Mem value = doubles ? x86::qword_ptr(vectors_end) : x86::dword_ptr(vectors_end);
      if (width_ == Width::sse) {
        doubles ? as_.movsd(low, value) : as_.movss(low, value);
        doubles ? as_.unpcklpd(low, low) : as_.shufps(low, low, 0);
      } else {
        doubles ? as_.vbroadcastsd(v, value) : as_.vbroadcastss(v, value);
      }
      return;
    }
    const std::uint64_t sign = doubles ? std::uint64_t(1) << 63 : std::uint64_t(1) << 31;
    const std::uint64_t bits = h.abs_mask ? (doubles ? ~sign : ~sign & 0xffffffffu) : sign;
    const x86::Gp scratch = doubles ? x86::Gp(vectors_end) : x86::Gp(vectors_end.r32());
    as_.mov(scratch, asmjit::imm(bits));
    switch (width_) {
      case Width::sse:
        doubles ? as_.movq(low, scratch) : as_.movd(low, scratch);
        doubles ? as_.unpcklpd(low, low) : as_.shufps(low, low, 0);
        break;
      case Width::avx:
        doubles ? as_.vmovq(low, scratch) : as_.vmovd(low, scratch);
        doubles ? as_.vbroadcastsd(v, low) : as_.vbroadcastss(v, low);
        break;
      case Width::avx512: doubles ? as_.vpbroadcastq(v, scratch) : as_.vpbroadcastd(v, scratch); break;
    }
  }

  // One vector's (or one element's) worth of the run's steps.
  void pass(const RunRegisters& r, const Form& form, bool streaming = false) {
    const std::uint32_t shift = form.doubles ? 3 : 2, bytes = form.scalar ? (form.doubles ? 8 : 4) : 0;
    const auto memory = [&](std::int32_t slot) {
      const std::size_t k = std::size_t(std::ranges::find(r.addressed, slot) - r.addressed.begin());
      x86::Mem mem = x86::ptr(address_registers[k], element, shift);
      mem.setSize(bytes ? bytes : std::uint32_t(vector(0, false).size()));
      return mem;
    };
    const auto load = [&](const RunRegisters::Operand& o) {
      if (o.load) as_.emit(form.move(), vector(o.reg, form.scalar), memory(o.slot));
    };
    if (!form.scalar)  // (the next block's elements asked of the caches: vm/fused_kernel.cpp's prefetch)
      for (std::int32_t slot : r.addressed)
        if (std::ranges::count(m_.fetched, slot) > 0) {
          x86::Mem next = memory(slot);
          next.setOffset(FusedKernel::block * std::int64_t(m_.places[std::size_t(slot)].size));
          as_.prefetcht0(next);
        }
    for (const RunRegisters::Step& s : r.steps) {
      const FusedKernel::Step& step = m_.steps[std::size_t(s.index)];
      load(s.a);
      if (step.family == nx::ops::Family::binary) load(s.b);
      if (comments_ && !form.scalar) as_.comment(("; " + step_text(m_, step)).c_str());
      const x86::Vec out = vector(s.out, form.scalar), a = vector(s.a.reg, form.scalar);
      const auto with = [&](std::uint32_t id, const x86::Vec& b) {  // out = a op b
        if (form.vex()) return void(as_.emit(id, out, a, b));
        if (s.out != s.a.reg) as_.movaps(out.as<x86::Xmm>(), a.as<x86::Xmm>());
        as_.emit(id, out, b);
      };
      switch (step.prim) {
        case Prim::exp:
        case Prim::tanh: transcendental_step(r, s, form.scalar); break;
        case Prim::neg:
        case Prim::abs: with(form.sign(step.prim == Prim::abs), vector(s.mask, form.scalar)); break;
        case Prim::sqrt:
          if (form.vex() && form.scalar) as_.emit(form.sqrt(), out, a, a);
          else as_.emit(form.sqrt(), out, a);
          break;
        default: with(form.arithmetic(step.prim), vector(s.b.reg, form.scalar)); break;
      }
      if (!s.write) continue;
      if (streaming && code_.streamed[std::size_t(step.out)]) as_.emit(form.stream(), memory(step.out), out);
      else as_.emit(form.move(), memory(step.out), out);
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
    x86::Vec t[tanh_scratch];
    for (std::size_t k = 0; k < s.scratch.size(); ++k) t[k] = vector(s.scratch[k], false);
    const x86::Vec out = vector(s.out, false), a = vector(s.a.reg, false);
    if (step.prim == Prim::tanh) return emit_tanh(ops_, pool_, out, a, std::span<const x86::Vec, tanh_scratch>(t));
    const Outside o{as_.newLabel(), as_.newLabel(), lanes};
    emit_exp(ops_, pool_, out, a, std::span<const x86::Vec, exp_scratch>(t, exp_scratch), o.at);
    as_.bind(o.back);
    outside_.push_back(o);
  }

  // The step's row loop on the lanes of its operand's register (one lane:
  // the scalar pass), the registers the run holds kept across the call in
  // the frame.
  void call_on_lanes(const LanesCall& l, bool one) {
    const std::uint32_t bytes = std::uint32_t(vector_bytes(width_));
    const std::uint32_t move = width_ == Width::sse ? I::kIdMovups : I::kIdVmovups;
    const auto saved = [&](int reg) { return x86::ptr(x86::rsp, vectors_saved_at + 64 * reg, bytes); };
    const std::size_t gps = std::min(l.addressed, caller_saved_addresses);
    const auto gp_saved = [&](std::size_t k) { return x86::qword_ptr(x86::rsp, gp_saved_at + 8 * int(k)); };
    for (std::size_t k = 0; k < gps; ++k) as_.mov(gp_saved(k), address_registers[k]);
    for (int reg = 0; reg < l.vectors; ++reg) as_.emit(move, saved(reg), vector(reg, false));
    as_.mov(x86::edi, one ? 1 : int(bytes / 4));
    as_.lea(x86::rsi, x86::ptr(x86::rsp, vectors_saved_at + 64 * l.a));
    as_.mov(x86::edx, 1);
    as_.lea(x86::rcx, x86::ptr(x86::rsp, result_at));
    if (width_ != Width::sse) as_.vzeroupper();
    as_.mov(x86::rax, asmjit::imm(reinterpret_cast<const void*>(l.step->row.unary)));
    as_.call(x86::rax);
    for (int reg = 0; reg < l.vectors; ++reg) as_.emit(move, vector(reg, false), saved(reg));
    for (std::size_t k = 0; k < gps; ++k) as_.mov(address_registers[k], gp_saved(k));
    if (one) {
      const std::uint32_t move_one = width_ == Width::sse ? I::kIdMovss : I::kIdVmovss;
      as_.emit(move_one, vector(l.out, true), x86::dword_ptr(x86::rsp, result_at));
    } else {
      as_.emit(move, vector(l.out, false), x86::ptr(x86::rsp, result_at, bytes));
    }
  }

  // Step s by the row loop the VM calls, with the VM's arguments
  // (vm/fused_kernel.cpp's run_step): the block's length, each operand's
  // address and stride, the result's address.
  void call_out(const FusedKernel::Step& s) {
    if (comments_) as_.comment(("; " + step_text(m_, s) + ": the row loop of " + std::string(nx::ops::info(s.prim).name)).c_str());
    if (width_ != Width::sse) as_.vzeroupper();
    const auto stride = [&](std::int32_t slot) { return asmjit::imm(m_.places[std::size_t(slot)].stride); };
    as_.mov(x86::rdi, length);
    as_.mov(x86::rsi, slot_address(s.in[0]));
    as_.mov(x86::rdx, stride(s.in[0]));
    const void* target = nullptr;
    switch (s.family) {
      case nx::ops::Family::binary:
        as_.mov(x86::rcx, slot_address(s.in[1]));
        as_.mov(x86::r8, stride(s.in[1]));
        as_.mov(x86::r9, slot_address(s.out));
        target = reinterpret_cast<const void*>(s.row.binary);
        break;
      case nx::ops::Family::select:
        as_.mov(x86::rcx, slot_address(s.in[1]));
        as_.mov(x86::r8, stride(s.in[1]));
        as_.mov(x86::r9, slot_address(s.in[2]));
        as_.mov(x86::rax, stride(s.in[2]));
        as_.mov(x86::qword_ptr(x86::rsp), x86::rax);
        as_.mov(x86::rax, slot_address(s.out));
        as_.mov(x86::qword_ptr(x86::rsp, 8), x86::rax);
        target = reinterpret_cast<const void*>(s.row.select);
        break;
      default:  // unary, convert
        as_.mov(x86::rcx, slot_address(s.out));
        target = reinterpret_cast<const void*>(s.row.unary);
        break;
    }
    as_.mov(x86::rax, asmjit::imm(target));
    as_.call(x86::rax);
  }

  x86::Assembler& as_;
  const FusedKernel& m_;
  const BlockCode& code_;
  Width width_;
  bool comments_;
  ConstantPool pool_;
  Float32Ops ops_;
  std::vector<Outside> outside_;
};

}  // namespace

const char* block_refusal(const FusedKernel& kernel) { return block_refusal(kernel, limits()); }

const void* emit_block(const FusedKernel& kernel, const char*& why) {
  return emit_blocks<x86::Assembler, BlockEmitter>(kernel, limits(), why);
}

std::string block_listing(const FusedKernel& kernel) { return blocks_listing<x86::Assembler, BlockEmitter>(kernel, limits()); }

}  // namespace rune::vm::native
