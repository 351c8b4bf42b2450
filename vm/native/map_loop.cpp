// A map kernel in short rows as machine code (x86-64, System V): a loop
// over its rows (a cloth's [n, 2] points and springs), each row of two
// float64 or four float32 held packed in one xmm register, as SIMD code
// over 2-D points would hold them.
//
// The kernel is first rewritten as the code of one row (RowCode): a
// register per value it computes, packed (a row: its key's slot and the
// next its home) or a scalar (a value of one element per row, or of one
// element), the steps' instructions (trip.hpp emits them; a packed step is
// one instruction on the row's lanes, each lane the IEEE operation of its
// element, so the bits are eager's), the reads at the top of a row (rows
// of its operands, the rows its gathers' indices name) and the writes at
// the end (its results, its scatters' adds, in row order: eager's). A
// scalar read by a packed step is repeated along the row; a short row's
// reduction combines its lanes in the order of the eager loop of short
// rows (ops/kernels/loops.hpp).
//
// The VM's blocks stay for every other kernel: rows of other lengths or
// types, whole reductions, broadcast operands, packed steps other than
// + - * /, negation, sqrt and abs.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include <asmjit/x86.h>

#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/trip.hpp"
#include "vm/operands.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;
using Source = MapKernel::Source;
using Kind = MapKernel::Place::Kind;
using Over = MapKernel::Step::Over;
using nx::ops::Prim;

// A row the tier holds packed: 16 bytes. And the most registers of a row's
// code (its frame is on the machine stack).
constexpr std::size_t row_bytes = 16;
constexpr std::size_t most_registers = 1024;

// The kernel as one row's code.
struct RowCode {
  Code code;              // the row's registers (constants: the reductions' identities) and instructions
  std::vector<std::int32_t> packed;  // the registers holding a row
  std::int64_t row = 1;   // elements per row
  std::int64_t rows = 0;  // rows of the kernel
  // A row an index names: the operand's row (bases[base]: `length` rows of
  // `row_bytes`) that element q of the indices (bases[indices]) names for
  // row q; where it names none, a row of zeros (a gather) or no add (a
  // scatter: a null pointer).
  struct Pointer {
    std::int32_t base = 0, indices = 0;
    std::int32_t indices_register = 0;  // (pointers by one tensor of indices read it once a row)
    nx::DType index{};
    nx::ops::IndexMode mode{};
    std::int64_t length = 0, row_bytes = 0;
    bool scatter = false;
  };
  // A register read at the top of a row or written at its end: at
  // bases[base] + offset, plus the row's first element's bytes (element),
  // the row's (row: a value of one element per row), nothing (fixed), or at
  // pointer's row (pointer; an add, for a write).
  enum class At : std::uint8_t { element, row, fixed, pointer };
  struct Access {
    std::int32_t reg = 0;
    At at = At::fixed;
    std::int32_t base = 0;  // (pointer: the pointer's index)
    std::int32_t offset = 0;
  };
  std::vector<Pointer> pointers;
  std::vector<Access> reads, writes;
};

// Writes a kernel's row code, or says why it cannot.
class RowWriter {
 public:
  explicit RowWriter(const MapKernel& m) : m_(m), regs_(m.slots.size(), -1), spread_(m.slots.size(), -1) {
    out_.row = m.row;
    out_.rows = m.row > 0 ? m.size / m.row : 0;
  }

  const char* write() {
    if (!m_.reductions.empty()) return "it reduces whole values (the VM folds them block by block)";
    if (m_.row <= 1) return "it is not in rows of two float64 or four float32";
    for (std::size_t k = 0; k < m_.slots.size(); ++k)
      if (const char* why = read(std::int32_t(k))) return why;
    for (const MapKernel::Step& s : m_.steps)
      if (const char* why = step(s)) return why;
    for (std::size_t k = 0; k < m_.slots.size(); ++k)
      if (const char* why = result(std::int32_t(k))) return why;
    for (std::size_t k = 0; k < m_.scatters.size(); ++k)
      if (const char* why = scatter(k)) return why;
    if (out_.code.scalar_types.size() > most_registers) return "a row holds too many values";
    return nullptr;
  }
  RowCode& row_code() { return out_; }

 private:
  static bool supported(nx::DType t) {
    return is_float(t) || t == nx::DType::bool_ || t == nx::DType::int32 || t == nx::DType::int64 ||
           t == nx::DType::uint32 || t == nx::DType::uint64 || t == nx::DType::int8 || t == nx::DType::uint8 ||
           t == nx::DType::int16;
  }
  // Whether a whole row of `t` is packed in a register (else the kernel
  // stays on the VM).
  bool packs(nx::DType t) const { return is_float(t) && std::size_t(out_.row) * nx::size_of(t) == row_bytes; }

  std::int32_t new_register(nx::DType t, bool packed) {
    const std::int32_t reg = std::int32_t(out_.code.scalar_types.size());
    for (int k = 0; k < (packed ? 2 : 1); ++k) {  // (a row's home: two slots)
      out_.code.scalar_types.push_back(t);
      out_.code.scalars.push_back(Scalar{});
    }
    if (packed) out_.packed.push_back(reg);
    return reg;
  }
  bool is_packed(std::int32_t reg) const { return std::ranges::find(out_.packed, reg) != out_.packed.end(); }
  std::int32_t size_of(std::int32_t k) const { return std::int32_t(m_.places[std::size_t(k)].size); }

  // Slot k's value as a packed row: a scalar repeated along it (once).
  std::int32_t row_of(std::int32_t k) {
    const std::int32_t reg = regs_[std::size_t(k)];
    if (is_packed(reg)) return reg;
    std::int32_t& spread = spread_[std::size_t(k)];
    if (spread < 0) spread = lanes(reg, -1);
    return spread;
  }
  // A scalar repeated along a row (lane < 0), or lane `lane` of a row: an
  // instruction of the Trip (Trip::lanes).
  std::int32_t lanes(std::int32_t reg, std::int32_t lane) {
    const nx::DType t = out_.code.scalar_types[std::size_t(reg)];
    Instruction in;
    in.op = Op::convert;
    in.dtype = t;
    in.a = reg;
    in.aux = std::max(lane, 0);
    in.dst = new_register(t, lane < 0);
    out_.code.instructions.push_back(in);
    return in.dst;
  }

  // The read of slot k, an operand (not computed).
  const char* read(std::int32_t k) {
    const MapKernel::Slot& slot = m_.slots[std::size_t(k)];
    const MapKernel::Place& place = m_.places[std::size_t(k)];
    if (slot.source == Source::computed || slot.source == Source::whole) return nullptr;
    if (!supported(slot.dtype)) return "it reads a value of a type the tier does not hold in registers";
    using At = RowCode::At;
    const auto add = [&](bool whole_row, At at, std::int32_t base) {
      if (whole_row && !packs(slot.dtype)) return "it reads rows other than two float64 or four float32";
      regs_[std::size_t(k)] = new_register(slot.dtype, whole_row);
      out_.reads.push_back({regs_[std::size_t(k)], at, base, 0});
      return static_cast<const char*>(nullptr);
    };
    if (slot.source == Source::indexed) {
      const MapKernel::Indexed& g = indexed(k);
      const std::int32_t p = pointer(g.rows, slot.indices, k, size_of(k), false);
      if (p < 0) return "it gathers rows other than the kernel's, or in slabs";
      return add(true, At::pointer, p);
    }
    switch (place.kind) {
      case Kind::memory: return place.stride == 0 ? add(false, At::fixed, k) : add(true, At::element, k);
      case Kind::row:
      case Kind::repeated: return add(true, At::fixed, k);
      case Kind::column:
      case Kind::columns:
      case Kind::per_row: return add(false, At::row, k);
      default: return "it reads an operand gathered per block (a broadcast)";
    }
  }

  const MapKernel::Indexed& indexed(std::int32_t slot) const {
    return *std::find_if(m_.indexed.begin(), m_.indexed.end(), [slot](const auto& g) { return g.slot == slot; });
  }

  // A pointer to the rows `rows` addresses in the operand at bases[base]
  // (elements of `size` bytes) by the indices in slot `indices`: its index,
  // or -1 when its rows are not the kernel's (or come in slabs).
  std::int32_t pointer(const MapKernel::Rows& rows, std::int32_t indices, std::int32_t base, std::int32_t size,
                       bool scatter) {
    if (rows.row != out_.row || rows.count != out_.rows || rows.length <= 0) return -1;
    const MapKernel::Slot& by = m_.slots[std::size_t(indices)];
    out_.pointers.push_back({base, indices, by.reg >= 0 ? by.reg : -2 - indices, by.dtype, rows.mode, rows.length, rows.row * size, scatter});
    return std::int32_t(out_.pointers.size()) - 1;
  }

  static bool packed_op(const MapKernel::Step& s) {
    return s.prim == Prim::add || s.prim == Prim::sub || s.prim == Prim::mul || s.prim == Prim::div ||
           s.prim == Prim::neg || s.prim == Prim::sqrt || s.prim == Prim::abs;
  }

  const char* step(const MapKernel::Step& s) {
    const nx::DType out_type = m_.slots[std::size_t(s.out)].dtype;
    if (!supported(out_type)) return "it computes a value of a type the tier does not hold in registers";
    std::int32_t& out = regs_[std::size_t(s.out)];
    switch (s.over) {
      case Over::spread: out = regs_[std::size_t(s.in[0])]; return nullptr;  // (repeated where a row reads it)
      case Over::reduce: return reduce(s);
      case Over::rows: out = instruction(s, out_type, false); return nullptr;
      case Over::paired:
      case Over::elements: {
        bool scalars = true;  // (operands of one element a row: a scalar, the same along the row)
        for (std::int32_t in : s.inputs()) scalars = scalars && !is_packed(regs_[std::size_t(in)]);
        if (scalars) {
          out = instruction(s, out_type, false);
          return nullptr;
        }
        if (!packed_op(s) || !packs(out_type) || s.family == nx::ops::Family::convert)
          return "a step on whole rows the tier does not emit packed";
        out = instruction(s, out_type, true);
        return nullptr;
      }
    }
    return nullptr;
  }

  // The instruction of step s, in a new register: on packed rows (its
  // operands made rows), or on scalars.
  std::int32_t instruction(const MapKernel::Step& s, nx::DType out_type, bool packed) {
    using nx::ops::Family;
    Instruction in;
    in.prim = s.prim;
    in.dtype = m_.slots[std::size_t(s.in[s.family == Family::select ? 1 : 0])].dtype;
    in.op = scalar_op(s.family, s.prim, in.dtype);
    in.row = s.row;
    std::int32_t operands[3] = {0, 0, 0};
    const std::span<const std::int32_t> inputs = s.inputs();
    for (std::size_t k = 0; k < inputs.size(); ++k)
      operands[k] = packed ? row_of(inputs[k]) : regs_[std::size_t(inputs[k])];
    in.a = operands[0], in.b = operands[1], in.c = operands[2];
    in.dst = new_register(out_type, packed);
    out_.code.instructions.push_back(in);
    return in.dst;
  }

  // A short row reduced as the eager loop of short rows reduces it: each
  // element combined with the identity (one packed step), then the halves
  // combined (lane k with lane k + w for w = 8, 4, 2, 1), lanes past the
  // row's end skipped: they hold the identity.
  const char* reduce(const MapKernel::Step& s) {
    const nx::DType t = m_.slots[std::size_t(s.in[0])].dtype;
    if ((s.prim != Prim::reduce_sum && s.prim != Prim::reduce_prod) || !packs(t))
      return "it reduces rows other than by a float sum or product";
    const bool sum = s.prim == Prim::reduce_sum;
    const std::int32_t identity = new_register(t, true);
    unsigned char row[row_bytes];  // (the identity in every lane: the register's two slots)
    for (std::int64_t j = 0; j < out_.row; ++j) {
      unsigned char* at = row + j * std::int64_t(nx::size_of(t));
      if (t == nx::DType::float64) std::memcpy(at, sum ? &zero64 : &one64, 8);
      else std::memcpy(at, sum ? &zero32 : &one32, 4);
    }
    for (std::int32_t half = 0; half < 2; ++half) {
      std::memcpy(out_.code.scalars[std::size_t(identity + half)].bytes, row + 8 * half, 8);
      out_.code.constants.push_back({true, identity + half});
    }
    const auto combine = [&](std::int32_t a, std::int32_t b, bool packed) {
      Instruction in;
      in.prim = sum ? Prim::add : Prim::mul;
      in.dtype = t;
      in.op = scalar_op(nx::ops::Family::binary, in.prim, t);
      in.a = a, in.b = b, in.dst = new_register(t, packed);
      out_.code.instructions.push_back(in);
      return in.dst;
    };
    const std::int32_t with_identity = combine(identity, row_of(s.in[0]), true);
    std::vector<std::int32_t> lane(std::size_t(out_.row));  // (lane 0 last: it takes the row's register)
    for (std::int32_t j = std::int32_t(out_.row); j-- > 0;) lane[std::size_t(j)] = lanes(with_identity, j);
    for (std::size_t w = 8; w >= 1; w /= 2)
      for (std::size_t k = 0; k < w && k + w < lane.size(); ++k) lane[k] = combine(lane[k], lane[k + w], false);
    regs_[std::size_t(s.out)] = lane[0];
    return nullptr;
  }

  // The writes of slot k when it is a result of the kernel.
  const char* result(std::int32_t k) {
    const MapKernel::Slot& slot = m_.slots[std::size_t(k)];
    if (slot.source != Source::computed || slot.reg < 0) return nullptr;
    const MapKernel::Place& place = m_.places[std::size_t(k)];
    if (place.kind == Kind::per_row) {
      if (is_packed(regs_[std::size_t(k)])) return "it writes a result the tier does not place";
      out_.writes.push_back({regs_[std::size_t(k)], RowCode::At::row, k, 0});
      return nullptr;
    }
    if (place.kind != Kind::memory || place.stride != 1 || !packs(slot.dtype))
      return "it writes a result the tier does not place";
    out_.writes.push_back({row_of(k), RowCode::At::element, k, 0});
    return nullptr;
  }

  // Scatter k's adds: into its result at bases[slots + k].
  const char* scatter(std::size_t k) {
    const MapKernel::Scattered& s = m_.scatters[k];
    if (!packs(m_.slots[std::size_t(s.slot)].dtype)) return "it scatters rows other than two float64 or four float32";
    const std::int32_t p = pointer(s.rows, s.indices, std::int32_t(m_.slots.size() + k), size_of(s.slot), true);
    if (p < 0) return "it scatters rows other than the kernel's, or in slabs";
    out_.writes.push_back({row_of(s.slot), RowCode::At::pointer, p, 0});
    return nullptr;
  }

  static constexpr double zero64 = 0., one64 = 1.;
  static constexpr float zero32 = 0.f, one32 = 1.f;
  const MapKernel& m_;
  RowCode out_;
  std::vector<std::int32_t> regs_;    // per slot: its register
  std::vector<std::int32_t> spread_;  // per slot of a scalar: the register repeating it along a row, once made
};

// The row of `length` rows at `base` that an index out of [0, length)
// names (nx::ops::row_of: from the end, clamped, or none): a gather reads
// a row of zeros where it names none, a scatter adds nothing (null).
alignas(64) const unsigned char zero_row[row_bytes] = {};

template <nx::ops::IndexMode Mode, bool Signed, bool Scatter>
const char* named_row(std::int64_t index, std::uint64_t length, const char* base, std::uint64_t row_bytes) {
  const std::size_t row = Signed ? nx::ops::row_of<Mode>(index, length) : nx::ops::row_of<Mode>(std::uint64_t(index), length);
  if (row == nx::ops::no_row) return Scatter ? nullptr : reinterpret_cast<const char*>(zero_row);
  return base + row * row_bytes;
}

using NamedRow = const char* (*)(std::int64_t, std::uint64_t, const char*, std::uint64_t);

template <bool Signed, bool Scatter> NamedRow named_row_for(nx::ops::IndexMode mode) {
  return mode == nx::ops::IndexMode::drop ? &named_row<nx::ops::IndexMode::drop, Signed, Scatter>
                                          : &named_row<nx::ops::IndexMode::clamp, Signed, Scatter>;
}
NamedRow named_row_for(nx::ops::IndexMode mode, bool is_signed, bool scatter) {
  if (is_signed) return scatter ? named_row_for<true, true>(mode) : named_row_for<true, false>(mode);
  return scatter ? named_row_for<false, true>(mode) : named_row_for<false, false>(mode);
}

bool is_signed(nx::DType t) {
  return t == nx::DType::int8 || t == nx::DType::int16 || t == nx::DType::int32 || t == nx::DType::int64;
}

std::uint32_t shift_of(std::size_t size) { return size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0; }

// General registers: the row's frame, the bases, the row, the end and the
// row's first element, all kept by callees; rax, rcx and rdx are scratch.
const x86::Gp frame = x86::rbx, bases = x86::r12, row = x86::r13, end = x86::r14, first = x86::r15;

class MapEmitter {
 public:
  // The events: each read just before the instruction that first reads
  // its value (fewer values held at once), the instructions, the writes.
  // (held: the pointers kept in registers, when no instruction calls out)
  MapEmitter(x86::Assembler& as, const RowCode& rc, bool comments, bool held) : as_(as), rc_(rc) {
    frames_.add(rc.code, frame);
    for (std::int32_t reg : rc.packed) frames_.pack(reg);
    std::vector<Event> instructions;
    add_instructions(frames_, 0, instructions);
    std::vector<std::int32_t> read_of(rc.code.scalar_types.size(), -1);
    for (std::size_t k = 0; k < rc.reads.size(); ++k) read_of[std::size_t(rc.reads[k].reg)] = std::int32_t(k);
    std::vector<Event> events;
    const auto read_before = [&](std::int32_t reg) {
      std::int32_t& k = read_of[std::size_t(reg)];
      if (k < 0) return;
      reads_.push_back({events.size(), std::size_t(k)});
      events.push_back({nullptr, 0, {}, {reg}});
      k = -1;
    };
    for (Event& e : instructions) {
      for (std::int32_t reg : e.reads) read_before(reg);
      events.push_back(std::move(e));
    }
    Event writes;  // the row's end writes its results and adds
    for (const RowCode::Access& w : rc.writes) {
      read_before(w.reg);
      writes.reads.push_back(w.reg);
    }
    events.push_back(std::move(writes));
    trip_.emplace(as, frames_, std::move(events), comments);
    group_pointers();
    for (std::size_t p = 0; held && p < rc.pointers.size() && p < std::size(pointer_registers); ++p)
      held_.push_back(pointer_registers[p]);
  }
  bool called_out() const { return trip_->called_out(); }

  // The stack: a call-out's two stack arguments, the pointers, the frame.
  void loop() {
    Trip& t = *trip_;
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
    std::size_t next_read = 0;
    for (std::size_t e = 0; e + 1 < t.size(); ++e) {
      if (next_read < reads_.size() && reads_[next_read].first == e) {
        read(rc_.reads[reads_[next_read++].second], e);
        continue;
      }
      t.instruction(e);
      rdx_ = none;  // (an instruction may use rdx)
    }
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
  // Pointers by the same indices into rows of one length and size: one
  // index read and checked a row for all.
  struct Group {
    std::vector<std::int32_t> members;
    asmjit::Label out_of_range, back;
  };

  static bool by_element(const RowCode::Access& a) { return a.at == RowCode::At::element; }
  x86::Mem base(std::int32_t k) const { return x86::qword_ptr(bases, 8 * k); }
  x86::Mem pointer_slot(std::int32_t p) const { return x86::qword_ptr(x86::rsp, pointers_at + 8 * p); }

  void group_pointers() {
    for (std::size_t p = 0; p < rc_.pointers.size(); ++p) {
      const RowCode::Pointer& a = rc_.pointers[p];
      const auto same = [&](const Group& g) {
        const RowCode::Pointer& b = rc_.pointers[std::size_t(g.members[0])];
        return a.indices_register == b.indices_register && a.index == b.index && a.length == b.length &&
               a.row_bytes == b.row_bytes && a.mode == b.mode;
      };
      auto g = std::find_if(groups_.begin(), groups_.end(), same);
      if (g == groups_.end()) g = groups_.insert(g, Group{{}, as_.newLabel(), as_.newLabel()});
      g->members.push_back(std::int32_t(p));
    }
  }

  // A group's pointers for this row: the operands' rows the index names,
  // in one compare when it is in range (a negative index is past every row,
  // unsigned), else out of line.
  void pointers(const Group& g) {
    const RowCode::Pointer& ptr = rc_.pointers[std::size_t(g.members[0])];
    const std::size_t size = nx::size_of(ptr.index);
    const bool sign = is_signed(ptr.index);
    as_.mov(x86::rdx, base(ptr.indices));
    const x86::Mem index = x86::ptr(x86::rdx, row, shift_of(size), 0, std::uint32_t(size));
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
      as_.mov(x86::rax, asmjit::imm(reinterpret_cast<const void*>(named_row_for(ptr.mode, is_signed(ptr.index), ptr.scatter))));
      as_.call(x86::rax);
      as_.mov(pointer_slot(p), x86::rax);
    }
    for (std::size_t p = 0; p < held_.size(); ++p) as_.mov(held_[p], pointer_slot(std::int32_t(p)));
    as_.jmp(g.back);
  }

  // Where an access is this row; the address's register in rdx (loaded
  // unless the access before left it there).
  x86::Mem place(const RowCode::Access& a) {
    const std::size_t size = frames_.size_of(a.reg);
    x86::Mem at = address(a, size);
    at.setSize(frames_.packed(a.reg) ? std::uint32_t(row_bytes) : std::uint32_t(size));
    return at;
  }
  x86::Mem address(const RowCode::Access& a, std::size_t size) {
    if (a.at == RowCode::At::pointer && std::size_t(a.base) < held_.size()) {
      return x86::ptr(held_[std::size_t(a.base)], a.offset, std::uint32_t(size));
    }
    const std::int32_t holds = a.at == RowCode::At::pointer ? -2 - a.base : a.base;
    if (rdx_ != holds) as_.mov(x86::rdx, a.at == RowCode::At::pointer ? pointer_slot(a.base) : base(a.base));
    rdx_ = holds;
    switch (a.at) {
      case RowCode::At::element:
        return x86::ptr(x86::rdx, first, shift_of(size), a.offset, std::uint32_t(size));
      case RowCode::At::row: return x86::ptr(x86::rdx, row, shift_of(size), a.offset, std::uint32_t(size));
      default: return x86::ptr(x86::rdx, a.offset, std::uint32_t(size));
    }
  }

  void read(const RowCode::Access& r, std::size_t e) {
    const std::int32_t next = trip_->written(e, 0);
    if (next == never) return;
    const x86::Mem at = place(r);
    if (!is_float(frames_.type(r.reg))) return trip_->copy(frames_.home(r.reg), at, frames_.size_of(r.reg));
    XmmCache& cache = trip_->cache();
    const int xmm = cache.allocate(0);
    move_value(as_, frames_, r.reg, x86::xmm(std::uint32_t(xmm)), at);
    cache.define(xmm, r.reg, next);
  }

  void write(const RowCode::Access& w) {
    XmmCache& cache = trip_->cache();
    if (w.at != RowCode::At::pointer) {
      const x86::Mem at = place(w);
      if (!is_float(frames_.type(w.reg))) return trip_->copy(at, frames_.home(w.reg), frames_.size_of(w.reg));
      return move_value(as_, frames_, w.reg, at, x86::xmm(std::uint32_t(cache.load(w.reg, never, 0))));
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
    move_value(as_, frames_, w.reg, sum, at);
    frames_.is_double(w.reg) ? as_.addpd(sum, x86::xmm(std::uint32_t(update)))
                             : as_.addps(sum, x86::xmm(std::uint32_t(update)));
    move_value(as_, frames_, w.reg, at, sum);
    as_.bind(skip);
  }

  x86::Assembler& as_;
  const RowCode& rc_;
  Frames frames_;
  std::optional<Trip> trip_;
  std::vector<std::pair<std::size_t, std::size_t>> reads_;  // (event, read) in order
  std::vector<Group> groups_;
  std::int32_t rdx_ = none;  // the base (or -2 - pointer) rdx holds
  std::vector<x86::Gp> held_;  // the registers holding the first pointers
};

const char* row_code(const MapKernel& m, std::optional<RowCode>& out) {
  RowWriter writer(m);
  if (const char* why = writer.write()) return why;
  out.emplace(std::move(writer.row_code()));
  return nullptr;
}

// Whether the row's code calls out (emitted once to see: then its pointers
// stay on the stack).
bool calls_out(const RowCode& rc) {
  asmjit::CodeHolder code;
  code.init(environment());
  x86::Assembler as(&code);
  MapEmitter emitter(as, rc, false, false);
  emitter.loop();
  return emitter.called_out();
}

}  // namespace

const char* map_refusal(const MapKernel& map) {
  std::optional<RowCode> rc;
  return row_code(map, rc);
}

const void* emit_map(const void* unit, const char*& why, const Instruction*& culprit) {
  culprit = nullptr;
  std::optional<RowCode> rc;
  if ((why = row_code(*static_cast<const MapKernel*>(unit), rc))) return nullptr;
  const bool held = !calls_out(*rc);
  return assemble([&](x86::Assembler& as) { MapEmitter(as, *rc, false, held).loop(); }, why);
}

std::string map_listing(const MapKernel& map) {
  std::optional<RowCode> rc;
  if (row_code(map, rc)) return "";
  const bool held = !calls_out(*rc);
  return assembly([&](x86::Assembler& as) { MapEmitter(as, *rc, true, held).loop(); });
}

}  // namespace rune::vm::native
