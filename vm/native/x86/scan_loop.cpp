// A scan's loop in machine code (x86-64, System V): each trip reads its xs
// rows, runs the step's instructions (trip.hpp), writes its ys rows and
// moves the carry, the float carry held in xmm registers across trips.
#include <asmjit/x86.h>

#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/loops.hpp"
#include "vm/native/x86/trip.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;

// General registers: the step frame's scalars, the words (rows, strides,
// ys), the row and the length, all kept by callees; rax and rdx are scratch.
const x86::Gp scalars = x86::rbx, words = x86::r12, row = x86::r13, length = x86::r14;

class ScanEmitter {
 public:
  ScanEmitter(x86::Assembler& as, const ScanOp& scan, bool comments)
      : as_(as), shape_(scan, scalars.id()), trip_(as, shape_.frames, std::move(shape_.events), comments),
        pinned_(trip_.pin(shape_.carry_params)) {}

  void loop() {
    const asmjit::Label top = as_.newLabel(), done = as_.newLabel();
    for (const x86::Gp& saved : {x86::rbx, x86::r12, x86::r13, x86::r14}) as_.push(saved);
    as_.sub(x86::rsp, 24);  // a call-out's two stack arguments, 16-byte aligned
    as_.mov(scalars, x86::rdi);
    as_.mov(words, x86::rsi);
    as_.mov(length, x86::rdx);
    as_.test(length, length);
    as_.jle(done);
    trip_.load(pinned_);
    as_.xor_(row.r32(), row.r32());
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    start_trip();
    for (std::size_t e = 0; e + 1 < trip_.size(); ++e) trip_.instruction(e);
    write_ys();
    trip_.move_carry(shape_.carry, pinned_);
    as_.inc(row);
    as_.cmp(row, length);
    as_.jl(top);
    trip_.store(pinned_);
    as_.bind(done);
    as_.add(x86::rsp, 24);
    for (const x86::Gp& saved : {x86::r14, x86::r13, x86::r12, x86::rbx}) as_.pop(saved);
    as_.ret();
  }

 private:
  x86::Mem word(std::size_t k) const { return x86::qword_ptr(words, std::int32_t(8 * k)); }

  // The top of a trip: the pinned carry in its registers, this row's xs read.
  void start_trip() {
    trip_.start(pinned_);
    RegisterCache& cache = trip_.cache();
    for (std::size_t k = 0; k < shape_.rows.size(); ++k) {
      const std::int32_t param = shape_.rows[k];
      if (trip_.first(param) == never) continue;
      as_.mov(x86::rax, row);
      as_.imul(x86::rax, word(shape_.rows.size() + k));
      as_.add(x86::rax, word(k));
      const std::size_t size = shape_.frames.size_of(param);
      const x86::Mem at = x86::ptr(x86::rax, 0, std::uint32_t(size));
      if (is_float(shape_.frames.type(param))) {
        const int xmm = cache.allocate(0);
        move_scalar(as_, x86::xmm(std::uint32_t(xmm)), at, shape_.frames.is_double(param));
        cache.define(xmm, param, trip_.first(param));
      } else {
        trip_.copy(trip_.home(param), at, size);
      }
    }
  }

  void write_ys() {
    const std::size_t first = 2 * shape_.rows.size();
    for (std::size_t k = 0; k < shape_.ys.size(); ++k) {
      const std::int32_t reg = shape_.ys[k];
      const std::size_t size = shape_.frames.size_of(reg);
      as_.mov(x86::rdx, word(first + k));
      const std::uint32_t shift = size_shift(size);
      const x86::Mem at = x86::ptr(x86::rdx, row, shift, 0, std::uint32_t(size));
      if (const int xmm = trip_.cache().find(reg); xmm >= 0)
        move_scalar(as_, at, x86::xmm(std::uint32_t(xmm)), shape_.frames.is_double(reg));
      else
        trip_.copy(at, trip_.home(reg), size);
    }
  }

  x86::Assembler& as_;
  ScanShape shape_;
  X86Trip trip_;
  Trip::Pinned pinned_;
};

}  // namespace

const void* emit_scan(const void* unit, const char*& why, const Instruction*& culprit) {
  const ScanOp& scan = *static_cast<const ScanOp*>(unit);
  if ((why = scan_refusal(scan, culprit))) return nullptr;
  return assemble<x86::Assembler>([&](x86::Assembler& as) { ScanEmitter(as, scan, false).loop(); }, why);
}

std::string scan_listing(const ScanOp& scan) {
  const Instruction* culprit = nullptr;
  if (scan_refusal(scan, culprit)) return "";
  return assembly<x86::Assembler>([&](x86::Assembler& as) { ScanEmitter(as, scan, true).loop(); });
}

}  // namespace rune::vm::native
