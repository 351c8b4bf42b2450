// A fused kernel's loop in machine code (x86-64, System V): the kernel's row
// code (row_code.hpp) run once a row, as SIMD code over 2-D points would
// hold them: the gathers' and scatters' rows found at the top of a row
// (one index read and compared per index tensor; out of range, out of
// line), each read just before the first instruction that reads it, the
// results written and the scatters' rows added at its end.
#include <algorithm>
#include <limits>
#include <optional>

#include <asmjit/x86.h>

#include "vm/native/native.hpp"
#include "vm/native/row_code.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/block_loop.hpp"
#include "vm/native/x86/trip.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;

// General registers: the row's frame, the bases, the row, the end and the
// row's first element, all kept by callees; rax, rcx and rdx are scratch.
const x86::Gp frame = x86::rbx, bases = x86::r12, row = x86::r13, end = x86::r14, first = x86::r15;

class FusedEmitter {
 public:
  // (held: the pointers kept in registers, when no instruction calls out)
  FusedEmitter(x86::Assembler& as, const RowCode& rc, bool comments, bool held)
      : as_(as), rc_(rc), plan_(rc, frame.id()), trip_(as, plan_.frames, std::move(plan_.events), comments) {
    for (std::vector<std::int32_t>& members : plan_.groups)
      groups_.push_back({std::move(members), as_.newLabel(), as_.newLabel()});
    for (std::size_t p = 0; held && p < rc.pointers.size() && p < std::size(pointer_registers); ++p)
      held_.push_back(pointer_registers[p]);
  }
  bool called_out() const { return trip_.called_out(); }

  // The stack: a call-out's two stack arguments, the pointers, the frame.
  void loop() {
    X86Trip& t = trip_;
    const std::int32_t frame_at = pointers_at + 8 * std::int32_t(rc_.pointers.size());
    // (six pushes and the return address: rsp is 16-byte aligned 8 bytes on)
    const std::int32_t bytes = (frame_at + 8 * std::int32_t(rc_.code.scalar_types.size()) + 15) / 16 * 16 + 8;
    const asmjit::Label top = as_.newLabel(), done = as_.newLabel();
    for (const x86::Gp& saved : callee_saved) as_.push(saved);
    as_.sub(x86::rsp, bytes);
    as_.lea(frame, x86::ptr(x86::rsp, frame_at));
    for (Location c : rc_.code.constants) {
      as_.mov(x86::rax, asmjit::imm(rc_.code.scalars[std::size_t(c.index)].i64));
      as_.mov(x86::qword_ptr(frame, 8 * c.index), x86::rax);
    }
    as_.mov(bases, x86::rdi);
    as_.mov(row, x86::rsi);
    as_.mov(end, x86::rdx);
    as_.cmp(row, end);
    as_.jge(done);
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    t.start({});
    if (std::ranges::any_of(rc_.reads, by_element) || std::ranges::any_of(rc_.writes, by_element))
      as_.imul(first, row, asmjit::imm(rc_.row));
    for (Group& g : groups_) pointers(g);
    plan_.each_event(rc_, t.size(), [&](const RowCode::Access& r, std::size_t e) { read(r, e); },
                     [&](std::size_t e) {
                       t.instruction(e);
                       rdx_ = none;  // (an instruction may use rdx)
                     });
    for (const RowCode::Access& w : rc_.writes) write(w);
    rdx_ = none;
    as_.inc(row);
    as_.cmp(row, end);
    as_.jl(top);
    as_.bind(done);
    as_.add(x86::rsp, bytes);
    for (std::size_t k = std::size(callee_saved); k-- > 0;) as_.pop(callee_saved[k]);
    as_.ret();
    for (const Group& g : groups_) named_rows(g);
  }

 private:
  static constexpr std::int32_t pointers_at = 16;
  static constexpr std::int32_t none = -1;
  static constexpr x86::Gp callee_saved[] = {x86::rbx, x86::rbp, x86::r12, x86::r13, x86::r14, x86::r15};
  // Where the first pointers are held when no instruction calls out.
  static constexpr x86::Gp pointer_registers[] = {x86::rbp, x86::rsi, x86::rdi, x86::r8, x86::r9, x86::r10, x86::r11};
  // A group of pointers (RowPlan::groups), and its way out of line and back.
  struct Group {
    std::vector<std::int32_t> members;
    asmjit::Label out_of_range, back;
  };

  static bool by_element(const RowCode::Access& a) { return a.at == RowCode::At::element; }
  x86::Mem base(std::int32_t k) const { return x86::qword_ptr(bases, 8 * k); }
  x86::Mem pointer_slot(std::int32_t p) const { return x86::qword_ptr(x86::rsp, pointers_at + 8 * p); }

  // A group's pointers for this row: the operands' rows the index names,
  // in one compare when it is in range (a negative index is past every row,
  // unsigned), else out of line.
  void pointers(const Group& g) {
    const RowCode::Pointer& ptr = rc_.pointers[std::size_t(g.members[0])];
    const std::size_t size = nx::size_of(ptr.index);
    const bool sign = signed_indices(ptr);
    as_.mov(x86::rdx, base(ptr.indices));
    const x86::Mem index = x86::ptr(x86::rdx, row, size_shift(size), 0, std::uint32_t(size));
    if (size == 8) as_.mov(x86::rax, index);
    else if (size == 4) sign ? as_.movsxd(x86::rax, index) : as_.mov(x86::eax, index);
    else sign ? as_.movsx(x86::rax, index) : as_.movzx(x86::eax, index);
    if (ptr.length <= std::numeric_limits<std::int32_t>::max()) {
      as_.cmp(x86::rax, asmjit::imm(ptr.length));
    } else {
      as_.mov(x86::rcx, asmjit::imm(ptr.length));
      as_.cmp(x86::rax, x86::rcx);
    }
    as_.jae(g.out_of_range);
    as_.imul(x86::rax, x86::rax, asmjit::imm(ptr.row_bytes));
    for (std::int32_t p : g.members) {
      const bool held = std::size_t(p) < held_.size();
      const x86::Gp to = held ? held_[std::size_t(p)] : x86::Gp(x86::rdx);
      as_.mov(to, x86::rax);
      as_.add(to, base(rc_.pointers[std::size_t(p)].base));
      if (!held) as_.mov(pointer_slot(p), x86::rdx);
    }
    as_.bind(g.back);
  }

  // (out of line) An index out of range: each pointer by named_row. The row
  // has not started: no xmm register holds a value; the pointers held in
  // registers wait in their slots while the calls run.
  void named_rows(const Group& g) {
    as_.bind(g.out_of_range);
    as_.mov(x86::qword_ptr(x86::rsp), x86::rax);  // (the index, while the calls run)
    for (std::size_t p = 0; p < held_.size(); ++p) as_.mov(pointer_slot(std::int32_t(p)), held_[p]);
    for (std::int32_t p : g.members) {
      const RowCode::Pointer& ptr = rc_.pointers[std::size_t(p)];
      as_.mov(x86::rdi, x86::qword_ptr(x86::rsp));
      as_.mov(x86::rsi, asmjit::imm(ptr.length));
      as_.mov(x86::rdx, base(ptr.base));
      as_.mov(x86::rcx, asmjit::imm(ptr.row_bytes));
      as_.mov(x86::rax, asmjit::imm(reinterpret_cast<const void*>(named_row(ptr))));
      as_.call(x86::rax);
      as_.mov(pointer_slot(p), x86::rax);
    }
    for (std::size_t p = 0; p < held_.size(); ++p) as_.mov(held_[p], pointer_slot(std::int32_t(p)));
    as_.jmp(g.back);
  }

  // Where an access is this row; the address's register in rdx (loaded
  // unless the access before left it there).
  x86::Mem place(const RowCode::Access& a) {
    const std::size_t size = plan_.frames.size_of(a.reg);
    x86::Mem at = address(a, size);
    at.setSize(plan_.frames.packed(a.reg) ? std::uint32_t(row_bytes) : std::uint32_t(size));
    return at;
  }
  x86::Mem address(const RowCode::Access& a, std::size_t size) {
    if (a.at == RowCode::At::pointer && std::size_t(a.base) < held_.size()) {
      return x86::ptr(held_[std::size_t(a.base)], 0, std::uint32_t(size));
    }
    const std::int32_t holds = a.at == RowCode::At::pointer ? -2 - a.base : a.base;
    if (rdx_ != holds) as_.mov(x86::rdx, a.at == RowCode::At::pointer ? pointer_slot(a.base) : base(a.base));
    rdx_ = holds;
    switch (a.at) {
      case RowCode::At::element:
        return x86::ptr(x86::rdx, first, size_shift(size), 0, std::uint32_t(size));
      case RowCode::At::row: return x86::ptr(x86::rdx, row, size_shift(size), 0, std::uint32_t(size));
      default: return x86::ptr(x86::rdx, 0, std::uint32_t(size));
    }
  }

  void read(const RowCode::Access& r, std::size_t e) {
    const std::int32_t next = trip_.written(e, 0);
    if (next == never) return;
    const x86::Mem at = place(r);
    if (!is_float(plan_.frames.type(r.reg))) return trip_.copy(trip_.home(r.reg), at, plan_.frames.size_of(r.reg));
    RegisterCache& cache = trip_.cache();
    const int xmm = cache.allocate(0);
    move_value(as_, plan_.frames, r.reg, x86::xmm(std::uint32_t(xmm)), at);
    cache.define(xmm, r.reg, next);
  }

  void write(const RowCode::Access& w) {
    RegisterCache& cache = trip_.cache();
    if (w.at != RowCode::At::pointer) {
      const x86::Mem at = place(w);
      if (!is_float(plan_.frames.type(w.reg))) return trip_.copy(at, trip_.home(w.reg), plan_.frames.size_of(w.reg));
      return move_value(as_, plan_.frames, w.reg, at, x86::xmm(std::uint32_t(cache.load(w.reg, never, 0))));
    }
    // (a scatter's add of a row, out + update lane by lane as eager adds;
    // none where the index names no row)
    const int update = cache.load(w.reg, never, 0);
    const x86::Mem at = place(w);
    const asmjit::Label skip = as_.newLabel();
    const x86::Gp row_pointer = x86::gpq(at.baseId());
    as_.test(row_pointer, row_pointer);
    as_.jz(skip);
    const x86::Xmm sum = x86::xmm15;
    move_value(as_, plan_.frames, w.reg, sum, at);
    plan_.frames.is_double(w.reg) ? as_.addpd(sum, x86::xmm(std::uint32_t(update)))
                             : as_.addps(sum, x86::xmm(std::uint32_t(update)));
    move_value(as_, plan_.frames, w.reg, at, sum);
    as_.bind(skip);
  }

  x86::Assembler& as_;
  const RowCode& rc_;
  RowPlan plan_;
  X86Trip trip_;
  std::vector<Group> groups_;
  std::int32_t rdx_ = none;  // the base (or -2 - pointer) rdx holds
  std::vector<x86::Gp> held_;  // the registers holding the first pointers
};


}  // namespace

bool fuses() { return true; }

const char* fused_refusal(const FusedKernel& kernel) {
  if (kernel.row == 0) return block_refusal(kernel);
  std::optional<RowCode> rc;
  return row_code(kernel, rc);
}

const void* emit_fused(const void* unit, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  const FusedKernel& kernel = *static_cast<const FusedKernel*>(unit);
  if (kernel.row == 0) return emit_block(kernel, why);
  std::optional<RowCode> rc;
  if ((why = row_code(kernel, rc))) return nullptr;
  return emit_rows<x86::Assembler, FusedEmitter>(*rc, why);
}

std::string fused_listing(const FusedKernel& kernel) {
  if (kernel.row == 0) return block_listing(kernel);
  std::optional<RowCode> rc;
  if (row_code(kernel, rc)) return "";
  return rows_listing<x86::Assembler, FusedEmitter>(*rc);
}

}  // namespace rune::vm::native
