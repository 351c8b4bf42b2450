// A fused kernel rewritten as the code of one row (row_code.hpp): a register
// per value it computes, packed (a row: its key's slot and the next its
// home) or a scalar; a step on whole rows one instruction on the row's
// lanes, each lane the IEEE operation of its element, so the bits are
// eager's; a scalar read by such a step repeated along the row; a short
// row's reduction lane by lane in the order of the eager loop of short rows
// (ops/kernels/loops.hpp); reads of operands' rows and of the rows gathers'
// indices name, writes of results and scatters' adds (in row order:
// eager's). Every other kernel stays on the VM: rows of other lengths or
// types, whole reductions, broadcast operands, steps on whole rows other
// than + - * /, negation, sqrt and abs.
#include "vm/native/row_code.hpp"

#include <algorithm>
#include <cstring>
#include <span>

#include "vm/native/frames.hpp"
#include "vm/operands.hpp"

namespace rune::vm::native {

namespace {

using Source = FusedKernel::Source;
using Kind = FusedKernel::Place::Kind;
using Over = FusedKernel::Step::Over;
using nx::ops::Prim;

// Writes a kernel's row code, or says why it cannot.
class RowWriter {
 public:
  explicit RowWriter(const FusedKernel& m) : m_(m), regs_(m.slots.size(), -1), spread_(m.slots.size(), -1) {
    out_.row = m.row;
    out_.rows = m.row > 0 ? m.size / m.row : 0;
  }

  const char* write() {
    if (!m_.reductions.empty()) return "it reduces whole values (the VM folds them block by block)";
    if (m_.row <= 1) return "it is not in rows of two float64 or four float32";
    for (std::size_t k = 0; k < m_.slots.size(); ++k)
      if (const char* why = read(std::int32_t(k))) return why;
    for (const FusedKernel::Step& s : m_.steps)
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
    const FusedKernel::Slot& slot = m_.slots[std::size_t(k)];
    const FusedKernel::Place& place = m_.places[std::size_t(k)];
    if (slot.source == Source::computed || slot.source == Source::whole) return nullptr;
    if (!supported(slot.dtype)) return "it reads a value of a type the tier does not hold in registers";
    using At = RowCode::At;
    const auto add = [&](bool whole_row, At at, std::int32_t base) {
      if (whole_row && !packs(slot.dtype)) return "it reads rows other than two float64 or four float32";
      regs_[std::size_t(k)] = new_register(slot.dtype, whole_row);
      out_.reads.push_back({regs_[std::size_t(k)], at, base});
      return static_cast<const char*>(nullptr);
    };
    if (slot.source == Source::indexed) {
      const FusedKernel::Indexed& g = indexed(k);
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

  const FusedKernel::Indexed& indexed(std::int32_t slot) const {
    return *std::find_if(m_.indexed.begin(), m_.indexed.end(), [slot](const auto& g) { return g.slot == slot; });
  }

  // A pointer to the rows `rows` addresses in the operand at bases[base]
  // (elements of `size` bytes) by the indices in slot `indices`: its index,
  // or -1 when its rows are not the kernel's (or come in slabs).
  std::int32_t pointer(const FusedKernel::Rows& rows, std::int32_t indices, std::int32_t base, std::int32_t size,
                       bool scatter) {
    if (rows.row != out_.row || rows.count != out_.rows || rows.length <= 0) return -1;
    const FusedKernel::Slot& by = m_.slots[std::size_t(indices)];
    out_.pointers.push_back({base, indices, by.reg >= 0 ? by.reg : -2 - indices, by.dtype, rows.mode, rows.length, rows.row * size, scatter});
    return std::int32_t(out_.pointers.size()) - 1;
  }

  static bool packed_op(const FusedKernel::Step& s) {
    return s.prim == Prim::add || s.prim == Prim::sub || s.prim == Prim::mul || s.prim == Prim::div ||
           s.prim == Prim::neg || s.prim == Prim::sqrt || s.prim == Prim::abs;
  }

  const char* step(const FusedKernel::Step& s) {
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
  std::int32_t instruction(const FusedKernel::Step& s, nx::DType out_type, bool packed) {
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
  const char* reduce(const FusedKernel::Step& s) {
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
    const FusedKernel::Slot& slot = m_.slots[std::size_t(k)];
    if (slot.source != Source::computed || slot.reg < 0) return nullptr;
    const FusedKernel::Place& place = m_.places[std::size_t(k)];
    if (place.kind == Kind::per_row) {
      if (is_packed(regs_[std::size_t(k)])) return "it writes a result the tier does not place";
      out_.writes.push_back({regs_[std::size_t(k)], RowCode::At::row, k});
      return nullptr;
    }
    if (place.kind != Kind::memory || place.stride != 1 || !packs(slot.dtype))
      return "it writes a result the tier does not place";
    out_.writes.push_back({row_of(k), RowCode::At::element, k});
    return nullptr;
  }

  // Scatter k's adds: into its result at bases[slots + k].
  const char* scatter(std::size_t k) {
    const FusedKernel::Scattered& s = m_.scatters[k];
    if (!packs(m_.slots[std::size_t(s.slot)].dtype)) return "it scatters rows other than two float64 or four float32";
    const std::int32_t p = pointer(s.rows, s.indices, std::int32_t(m_.slots.size() + k), size_of(s.slot), true);
    if (p < 0) return "it scatters rows other than the kernel's, or in slabs";
    out_.writes.push_back({row_of(s.slot), RowCode::At::pointer, p});
    return nullptr;
  }

  static constexpr double zero64 = 0., one64 = 1.;
  static constexpr float zero32 = 0.f, one32 = 1.f;
  const FusedKernel& m_;
  RowCode out_;
  std::vector<std::int32_t> regs_;    // per slot: its register
  std::vector<std::int32_t> spread_;  // per slot of a scalar: the register repeating it along a row, once made
};

alignas(64) const unsigned char zero_row[row_bytes] = {};

template <nx::ops::IndexMode Mode, bool Signed, bool Scatter>
const char* row_named(std::int64_t index, std::uint64_t length, const char* base, std::uint64_t bytes) {
  const std::size_t row = Signed ? nx::ops::row_of<Mode>(index, length) : nx::ops::row_of<Mode>(std::uint64_t(index), length);
  if (row == nx::ops::no_row) return Scatter ? nullptr : reinterpret_cast<const char*>(zero_row);
  return base + row * bytes;
}

template <bool Signed, bool Scatter> NamedRow row_named_by(nx::ops::IndexMode mode) {
  return mode == nx::ops::IndexMode::drop ? &row_named<nx::ops::IndexMode::drop, Signed, Scatter>
                                          : &row_named<nx::ops::IndexMode::clamp, Signed, Scatter>;
}

}  // namespace

RowPlan::RowPlan(const RowCode& rc, std::uint32_t frame) {
  frames.add(rc.code, frame);
  for (std::int32_t reg : rc.packed) frames.pack(reg);
  std::vector<Event> instructions;
  add_instructions(frames, 0, instructions);
  std::vector<std::int32_t> read_of(rc.code.scalar_types.size(), -1);
  for (std::size_t k = 0; k < rc.reads.size(); ++k) read_of[std::size_t(rc.reads[k].reg)] = std::int32_t(k);
  const auto read_before = [&](std::int32_t reg) {
    std::int32_t& k = read_of[std::size_t(reg)];
    if (k < 0) return;
    reads.push_back({events.size(), std::size_t(k)});
    events.push_back({nullptr, 0, {}, {reg}});
    k = -1;
  };
  for (Event& e : instructions) {
    for (std::int32_t reg : e.reads) read_before(reg);
    events.push_back(std::move(e));
  }
  Event writes;
  for (const RowCode::Access& w : rc.writes) {
    read_before(w.reg);
    writes.reads.push_back(w.reg);
  }
  events.push_back(std::move(writes));
  for (std::size_t p = 0; p < rc.pointers.size(); ++p) {
    const RowCode::Pointer& a = rc.pointers[p];
    const auto same = [&](const std::vector<std::int32_t>& g) {
      const RowCode::Pointer& b = rc.pointers[std::size_t(g[0])];
      return a.indices_register == b.indices_register && a.index == b.index && a.length == b.length &&
             a.row_bytes == b.row_bytes && a.mode == b.mode;
    };
    auto g = std::find_if(groups.begin(), groups.end(), same);
    if (g == groups.end()) g = groups.insert(g, std::vector<std::int32_t>{});
    g->push_back(std::int32_t(p));
  }
}

bool signed_indices(const RowCode::Pointer& p) {
  const nx::DType t = p.index;
  return t == nx::DType::int8 || t == nx::DType::int16 || t == nx::DType::int32 || t == nx::DType::int64;
}

NamedRow named_row(const RowCode::Pointer& p) {
  if (signed_indices(p)) return p.scatter ? row_named_by<true, true>(p.mode) : row_named_by<true, false>(p.mode);
  return p.scatter ? row_named_by<false, true>(p.mode) : row_named_by<false, false>(p.mode);
}

const char* row_code(const FusedKernel& m, std::optional<RowCode>& out) {
  RowWriter writer(m);
  if (const char* why = writer.write()) return why;
  out.emplace(std::move(writer.row_code()));
  return nullptr;
}

}  // namespace rune::vm::native
