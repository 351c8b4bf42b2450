#include "vm/operands.hpp"

namespace rune::vm {

namespace {

void add_tensors(Registers& out, const std::vector<std::int32_t>& registers) {
  for (std::int32_t r : registers) out.push_back({false, r});
}
void add(Registers& out, const std::vector<Location>& at) { out.insert(out.end(), at.begin(), at.end()); }

// The fields 1..3 (a, b, c) that are registers, or field 0 (dst).
void fields(Registers& out, const Instruction& in, int first, int last) {
  const std::int32_t value[] = {in.dst, in.a, in.b, in.c};
  for (int k = first; k <= last; ++k) {
    const Operand o = operand(in.op, k);
    if (o == Operand::scalar || o == Operand::tensor) out.push_back({o == Operand::scalar, value[k]});
  }
}

// A fused kernel's registers: the slots it reads (in memory or a scalar
// register), or those it writes (its results in memory, its reductions'
// and scatters' results).
void kernel_registers(Registers& out, const FusedKernel& m, bool written) {
  using Source = FusedKernel::Source;
  for (const FusedKernel::Slot& s : m.slots) {
    const bool computed = s.source == Source::computed;
    if (!written && !computed) out.push_back({s.source == Source::scalar, s.reg});
    if (written && computed && s.reg >= 0) out.push_back({false, s.reg});
  }
  if (!written) return;
  for (const FusedKernel::Reduction& r : m.reductions) out.push_back(r.out);
  for (const FusedKernel::Scattered& s : m.scatters) out.push_back({false, s.out});
}

Registers registers(const Code& code, const Instruction& in, bool written) {
  Registers out;
  const auto at = std::size_t(in.aux);
  switch (info(in.op).table) {
    case Table::none: fields(out, in, written ? 0 : 1, written ? 0 : 3); break;
    case Table::calls: add_tensors(out, written ? code.calls[at].outputs : code.calls[at].inputs); break;
    case Table::kernels: kernel_registers(out, code.kernels[at], written); break;
    case Table::scans: add(out, written ? code.scans[at].outputs : code.scans[at].inputs); break;
    case Table::invokes: add(out, written ? code.invokes[at].outputs : code.invokes[at].inputs); break;
    case Table::releases: break;
  }
  return out;
}

}  // namespace

Registers reads(const Code& code, const Instruction& in) { return registers(code, in, false); }
Registers writes(const Code& code, const Instruction& in) { return registers(code, in, true); }

Op scalar_op(nx::ops::Family family, nx::ops::Prim prim, nx::DType dtype) {
  using nx::ops::Family;
  using nx::ops::Prim;
  const bool f64 = dtype == nx::DType::float64;
  if (f64 || dtype == nx::DType::float32) {
    switch (prim) {
      case Prim::add: return f64 ? Op::add_f64 : Op::add_f32;
      case Prim::sub: return f64 ? Op::sub_f64 : Op::sub_f32;
      case Prim::mul: return f64 ? Op::mul_f64 : Op::mul_f32;
      case Prim::div: return f64 ? Op::div_f64 : Op::div_f32;
      case Prim::neg: return f64 ? Op::neg_f64 : Op::neg_f32;
      default: break;
    }
  }
  switch (family) {
    case Family::unary: return Op::unary;
    case Family::binary: return Op::binary;
    case Family::select: return Op::select;
    default: return Op::convert;
  }
}

}  // namespace rune::vm
