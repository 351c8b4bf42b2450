// A scan's loop in machine code (AArch64, AAPCS64): each trip reads its xs
// rows, runs the step's instructions (trip.hpp), writes its ys rows and
// moves the carry, the float carry held in vector registers across trips.

#include "vm/native/a64/trip.hpp"
#include "vm/native/loops.hpp"
#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"

namespace rune::vm::native {

namespace {

namespace a64 = asmjit::a64;

// General registers: the step frame's scalars, the words (rows, strides,
// ys), the row and the length, all kept by callees; x9, x10 are scratch.
const a64::Gp scalars = a64::x19, words = a64::x20, row = a64::x21, length = a64::x22;

class ScanEmitter {
 public:
  ScanEmitter(a64::Assembler& as, const ScanOp& scan, bool comments)
      : as_(as), shape_(scan, scalars.id()), trip_(as, shape_.frames, std::move(shape_.events), comments),
        pinned_(trip_.pin(shape_.carry_params)) {}

  void loop() {
    const asmjit::Label top = as_.newLabel(), done = as_.newLabel();
    enter(as_);
    as_.mov(scalars, a64::x0);
    as_.mov(words, a64::x1);
    as_.mov(length, a64::x2);
    as_.cmp(length, 0);
    as_.b_le(done);
    trip_.load(pinned_);
    as_.mov(row, a64::xzr);
    as_.bind(top);
    start_trip();
    for (std::size_t e = 0; e + 1 < trip_.size(); ++e) trip_.instruction(e);
    write_ys();
    trip_.move_carry(shape_.carry, pinned_);
    as_.add(row, row, 1);
    as_.cmp(row, length);
    as_.b_lt(top);
    trip_.store(pinned_);
    as_.bind(done);
    leave(as_);
  }

 private:
  a64::Mem word(std::size_t k) const { return a64::ptr(words, std::int32_t(8 * k)); }

  // The top of a trip: the pinned carry in its registers, this row's xs read.
  void start_trip() {
    trip_.start(pinned_);
    RegisterCache& cache = trip_.cache();
    for (std::size_t k = 0; k < shape_.rows.size(); ++k) {
      const std::int32_t param = shape_.rows[k];
      if (trip_.first(param) == never) continue;
      as_.ldr(a64::x9, word(shape_.rows.size() + k));
      as_.mul(a64::x9, row, a64::x9);
      as_.ldr(a64::x10, word(k));
      as_.add(a64::x9, a64::x9, a64::x10);
      const std::size_t size = shape_.frames.size_of(param);
      const a64::Mem at = a64::ptr(a64::x9);
      if (is_float(shape_.frames.type(param))) {
        const int reg = cache.allocate(0);
        as_.ldr(fp(reg, shape_.frames.is_double(param)), at);
        cache.define(reg, param, trip_.first(param));
      } else {
        trip_.copy(trip_.home(param), at, size);
      }
    }
  }

  void write_ys() {
    const std::size_t first = 2 * shape_.rows.size();
    for (std::size_t k = 0; k < shape_.ys.size(); ++k) {
      const std::int32_t key = shape_.ys[k];
      const std::size_t size = shape_.frames.size_of(key);
      as_.ldr(a64::x10, word(first + k));
      const std::uint32_t shift = size_shift(size);
      const a64::Mem at = shift ? a64::ptr(a64::x10, row, a64::lsl(shift)) : a64::ptr(a64::x10, row);
      if (const int reg = trip_.cache().find(key); reg >= 0)
        as_.str(fp(reg, shape_.frames.is_double(key)), at);
      else
        trip_.copy(at, trip_.home(key), size);
    }
  }

  a64::Assembler& as_;
  ScanShape shape_;
  A64Trip trip_;
  Trip::Pinned pinned_;
};

}  // namespace

const void* emit_scan(const void* unit, const char*& why, const Instruction*& culprit) {
  const ScanOp& scan = *static_cast<const ScanOp*>(unit);
  if ((why = scan_refusal(scan, culprit))) return nullptr;
  return assemble<a64::Assembler>([&](a64::Assembler& as) { ScanEmitter(as, scan, false).loop(); }, why);
}

std::string scan_listing(const ScanOp& scan) {
  const Instruction* culprit = nullptr;
  if (scan_refusal(scan, culprit)) return "";
  return assembly<a64::Assembler>([&](a64::Assembler& as) { ScanEmitter(as, scan, true).loop(); });
}

}  // namespace rune::vm::native
