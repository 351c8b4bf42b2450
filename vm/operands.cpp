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

}  // namespace

Registers reads(const Code& code, const Instruction& in) {
  Registers out;
  const auto at = std::size_t(in.aux);
  switch (info(in.op).table) {
    case Table::none: fields(out, in, 1, 3); break;
    case Table::calls: add_tensors(out, code.calls[at].inputs); break;
    case Table::maps:
      for (const MapKernel::Slot& s : code.maps[at].slots)
        if (s.source != MapKernel::Source::computed) out.push_back({s.source == MapKernel::Source::scalar, s.reg});
      break;
    case Table::scans: add(out, code.scans[at].inputs); break;
    case Table::invokes: add(out, code.invokes[at].inputs); break;
    case Table::releases: break;
  }
  return out;
}

Registers writes(const Code& code, const Instruction& in) {
  Registers out;
  const auto at = std::size_t(in.aux);
  switch (info(in.op).table) {
    case Table::none: fields(out, in, 0, 0); break;
    case Table::calls: add_tensors(out, code.calls[at].outputs); break;
    case Table::maps: {
      const MapKernel& m = code.maps[at];
      for (const MapKernel::Slot& s : m.slots)
        if (s.source == MapKernel::Source::computed && s.reg >= 0) out.push_back({false, s.reg});
      for (const MapKernel::Reduction& r : m.reductions) out.push_back(r.out);
      for (const MapKernel::Scattered& s : m.scatters) out.push_back({false, s.out});
      break;
    }
    case Table::scans: add(out, code.scans[at].outputs); break;
    case Table::invokes: add(out, code.invokes[at].outputs); break;
    case Table::releases: break;
  }
  return out;
}

}  // namespace rune::vm
