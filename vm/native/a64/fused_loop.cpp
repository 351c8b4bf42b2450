// A fused kernel's loop in machine code (AArch64, AAPCS64): the kernel's
// row code (row_code.hpp) run once a row, each packed row in one q
// register: the gathers' and scatters' rows found at the top of a row (one
// index read and compared per index tensor; out of range, out of line),
// each read just before the first instruction that reads it, the results
// written and the scatters' rows added at its end. (Kernels not in rows:
// block_loop.cpp.)
#include <algorithm>
#include <optional>

#include "vm/native/a64/trip.hpp"
#include "vm/native/block_loop.hpp"
#include "vm/native/loops.hpp"
#include "vm/native/native.hpp"
#include "vm/native/row_code.hpp"
#include "vm/native/runtime.hpp"

namespace rune::vm::native {

namespace {

namespace a64 = asmjit::a64;

// General registers: the row's frame, the bases, the row and the end, kept
// by callees (saved by enter); x10 holds the address of a read or write,
// x17 a row's offset in the rows an index names; x9 and x16 are the trip's
// scratch.
const a64::Gp frame = a64::x19, bases = a64::x20, row = a64::x21, end = a64::x22, address = a64::x10, offset = a64::x17;

class FusedEmitter {
 public:
  // (held: the pointers kept in registers, when no instruction calls out)
  FusedEmitter(a64::Assembler& as, const RowCode& rc, bool comments, bool held)
      : as_(as), rc_(rc), plan_(rc, frame.id()), trip_(as, plan_.frames, std::move(plan_.events), comments) {
    for (std::vector<std::int32_t>& members : plan_.groups)
      groups_.push_back({std::move(members), as_.newLabel(), as_.newLabel()});
    for (std::size_t p = 0; held && p < rc.pointers.size() && p < std::size(pointer_registers); ++p)
      held_.push_back(a64::x(pointer_registers[p]));
  }
  bool called_out() const { return trip_.called_out(); }

  // The stack below enter's: the index of a row out of range while the
  // calls run, the pointers, the frame.
  void loop() {
    A64Trip& t = trip_;
    const std::int32_t frame_at = pointers_at + 8 * std::int32_t(rc_.pointers.size());
    const std::int32_t bytes = (frame_at + 8 * std::int32_t(rc_.code.scalar_types.size()) + 15) / 16 * 16;
    const asmjit::Label top = as_.newLabel(), done = as_.newLabel();
    enter(as_);
    move_stack(bytes, false);
    as_.add(frame, a64::sp, frame_at);
    for (Location c : rc_.code.constants) {
      move_immediate(as_, a64::x9, std::uint64_t(rc_.code.scalars[std::size_t(c.index)].i64));
      as_.str(a64::x9, a64::ptr(frame, 8 * c.index));
    }
    as_.mov(bases, a64::x0);
    as_.mov(row, a64::x1);
    as_.mov(end, a64::x2);
    as_.cmp(row, end);
    as_.b_ge(done);
    as_.bind(top);
    t.start({});
    for (Group& g : groups_) pointers(g);
    plan_.each_event(rc_, t.size(), [&](const RowCode::Access& r, std::size_t e) { read(r, e); },
                     [&](std::size_t e) {
                       t.instruction(e);
                       address_ = none;  // (an instruction may call out)
                     });
    for (const RowCode::Access& w : rc_.writes) write(w);
    address_ = none;
    as_.add(row, row, 1);
    as_.cmp(row, end);
    as_.b_lt(top);
    as_.bind(done);
    move_stack(bytes, true);
    leave(as_);
    for (const Group& g : groups_) named_rows(g);
  }

 private:
  static constexpr std::int32_t pointers_at = 16;
  static constexpr std::int32_t none = -1;
  // Where the first pointers are held when no instruction calls out (the
  // caller's registers, which neither the trip nor the loop uses).
  static constexpr std::uint32_t pointer_registers[] = {11, 12, 13, 14, 15};
  // A group of pointers (RowPlan::groups), and its way out of line and back.
  struct Group {
    std::vector<std::int32_t> members;
    asmjit::Label out_of_range, back;
  };

  a64::Mem base(std::int32_t k) const { return a64::ptr(bases, 8 * k); }
  a64::Mem pointer_slot(std::int32_t p) const { return a64::ptr(a64::sp, pointers_at + 8 * p); }

  // sp moved down by `bytes` (or back up): in two steps where it is more
  // than an immediate's 12 bits (each step's immediate is encodable).
  void move_stack(std::int32_t bytes, bool up) {
    for (const std::int32_t step : {bytes & ~0xfff, bytes & 0xfff}) {
      if (step == 0) continue;
      up ? as_.add(a64::sp, a64::sp, step) : as_.sub(a64::sp, a64::sp, step);
    }
  }

  // A group's pointers for this row: the operands' rows the index names,
  // in one compare when it is in range (a negative index is past every row,
  // unsigned), else out of line. The index stays in x9 for the way out.
  void pointers(const Group& g) {
    const RowCode::Pointer& ptr = rc_.pointers[std::size_t(g.members[0])];
    const std::size_t size = nx::size_of(ptr.index);
    as_.ldr(address, base(ptr.indices));
    const a64::Mem index = size == 1 ? a64::ptr(address, row) : a64::ptr(address, row, a64::lsl(size_shift(size)));
    if (!signed_indices(ptr)) load_bytes(as_, gp(9, size), index, size);
    else if (size == 8) as_.ldr(a64::x9, index);
    else if (size == 4) as_.ldrsw(a64::x9, index);
    else if (size == 2) as_.ldrsh(a64::x9, index);
    else as_.ldrsb(a64::x9, index);
    move_immediate(as_, address, std::uint64_t(ptr.length));
    as_.cmp(a64::x9, address);
    as_.b_hs(g.out_of_range);
    move_immediate(as_, address, std::uint64_t(ptr.row_bytes));
    as_.mul(offset, a64::x9, address);
    for (std::int32_t p : g.members) {
      const bool held = std::size_t(p) < held_.size();
      const a64::Gp to = held ? held_[std::size_t(p)] : address;
      as_.ldr(to, base(rc_.pointers[std::size_t(p)].base));
      as_.add(to, to, offset);
      if (!held) as_.str(address, pointer_slot(p));
    }
    as_.bind(g.back);
    address_ = none;
  }

  // (out of line) An index out of range: each pointer by named_row. The row
  // has not started: no vector register holds a value; the pointers held in
  // registers wait in their slots while the calls run.
  void named_rows(const Group& g) {
    as_.bind(g.out_of_range);
    as_.str(a64::x9, a64::ptr(a64::sp));  // (the index, while the calls run)
    for (std::size_t p = 0; p < held_.size(); ++p) as_.str(held_[p], pointer_slot(std::int32_t(p)));
    for (std::int32_t p : g.members) {
      const RowCode::Pointer& ptr = rc_.pointers[std::size_t(p)];
      as_.ldr(a64::x0, a64::ptr(a64::sp));
      move_immediate(as_, a64::x1, std::uint64_t(ptr.length));
      as_.ldr(a64::x2, base(ptr.base));
      move_immediate(as_, a64::x3, std::uint64_t(ptr.row_bytes));
      call(as_, reinterpret_cast<const void*>(named_row(ptr)));
      as_.str(a64::x0, pointer_slot(p));
    }
    for (std::size_t p = 0; p < held_.size(); ++p) as_.ldr(held_[p], pointer_slot(std::int32_t(p)));
    as_.b(g.back);
  }

  // Where an access is this row; its base in x10 (loaded unless the access
  // before left it there), or in the register holding its pointer.
  a64::Mem place(const RowCode::Access& a) {
    if (a.at == RowCode::At::pointer && std::size_t(a.base) < held_.size()) return a64::ptr(held_[std::size_t(a.base)]);
    const std::int32_t holds = a.at == RowCode::At::pointer ? -2 - a.base : a.base;
    if (address_ != holds) as_.ldr(address, a.at == RowCode::At::pointer ? pointer_slot(a.base) : base(a.base));
    address_ = holds;
    switch (a.at) {
      case RowCode::At::element: return a64::ptr(address, row, a64::lsl(4));  // (a packed row: 16 bytes)
      case RowCode::At::row: {
        const std::size_t size = plan_.frames.size_of(a.reg);
        return size == 1 ? a64::ptr(address, row) : a64::ptr(address, row, a64::lsl(size_shift(size)));
      }
      default: return a64::ptr(address);
    }
  }

  void read(const RowCode::Access& r, std::size_t e) {
    const std::int32_t next = trip_.written(e, 0);
    if (next == never) return;
    const a64::Mem at = place(r);
    if (!is_float(plan_.frames.type(r.reg))) return trip_.copy(trip_.home(r.reg), at, plan_.frames.size_of(r.reg));
    RegisterCache& cache = trip_.cache();
    const int reg = cache.allocate(0);
    as_.ldr(trip_.whole(reg, r.reg), at);
    cache.define(reg, r.reg, next);
  }

  void write(const RowCode::Access& w) {
    RegisterCache& cache = trip_.cache();
    if (w.at != RowCode::At::pointer) {
      const a64::Mem at = place(w);
      if (!is_float(plan_.frames.type(w.reg))) return trip_.copy(at, trip_.home(w.reg), plan_.frames.size_of(w.reg));
      return void(as_.str(trip_.whole(cache.load(w.reg, never, 0), w.reg), at));
    }
    // (a scatter's add of a row, out + update lane by lane as eager adds;
    // none where the index names no row)
    const int update = cache.load(w.reg, never, 0);
    const a64::Mem at = place(w);
    const asmjit::Label skip = as_.newLabel();
    as_.cbz(a64::x(at.baseId()), skip);
    const bool doubles = plan_.frames.is_double(w.reg);
    as_.ldr(a64::v31.q(), at);
    as_.fadd(lanes_of(31, doubles), lanes_of(31, doubles), lanes_of(update, doubles));
    as_.str(a64::v31.q(), at);
    as_.bind(skip);
  }

  a64::Assembler& as_;
  const RowCode& rc_;
  RowPlan plan_;
  A64Trip trip_;
  std::vector<Group> groups_;
  std::int32_t address_ = none;  // the base (or -2 - pointer) x10 holds
  std::vector<a64::Gp> held_;    // the registers holding the first pointers
};

// The row code of a kernel, or why the tier leaves it on the VM (its
// frame beyond the emitter's offsets, as a loop's).
const char* row_code_within_reach(const FusedKernel& kernel, std::optional<RowCode>& rc) {
  if (const char* why = row_code(kernel, rc)) return why;
  return frames_refusal(rc->code.scalar_types.size());
}

}  // namespace

bool fuses() { return true; }

const char* fused_refusal(const FusedKernel& kernel) {
  if (kernel.row == 0) return block_refusal(kernel);
  std::optional<RowCode> rc;
  return row_code_within_reach(kernel, rc);
}

const void* emit_fused(const void* unit, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  const FusedKernel& kernel = *static_cast<const FusedKernel*>(unit);
  if (kernel.row == 0) return emit_block(kernel, why);
  std::optional<RowCode> rc;
  if ((why = row_code_within_reach(kernel, rc))) return nullptr;
  return emit_rows<a64::Assembler, FusedEmitter>(*rc, why);
}

std::string fused_listing(const FusedKernel& kernel) {
  if (kernel.row == 0) return block_listing(kernel);
  std::optional<RowCode> rc;
  if (row_code_within_reach(kernel, rc)) return "";
  return rows_listing<a64::Assembler, FusedEmitter>(*rc);
}

}  // namespace rune::vm::native
