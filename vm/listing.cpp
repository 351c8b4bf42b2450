#include "vm/listing.hpp"

#include <algorithm>
#include <span>
#include <sstream>
#include <string_view>

#include "ir/eval.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"
#include "vm/operands.hpp"

namespace rune::vm {

namespace {

std::string reg(Location at) {
  std::string name(1, at.scalar ? 's' : 't');
  return name += std::to_string(at.index);
}
std::string sreg(std::int32_t i) { return reg({true, i}); }
std::string treg(std::int32_t i) { return reg({false, i}); }

std::string joined(std::span<const Location> at) {
  std::string out;
  for (Location l : at) out.append(out.empty() ? "" : " ").append(reg(l));
  return out;
}
std::string joined(const std::vector<std::int32_t>& tensors) {
  std::string out;
  for (std::int32_t t : tensors) out.append(out.empty() ? "" : " ").append(treg(t));
  return out;
}

std::string indented(const std::string& text, const std::string& by) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out += by + line + '\n';
  return out;
}

// " axis=1 mode=drop": how a gather or scatter indexes, where it is not
// along axis 0 in clamp mode (as program text writes it).
std::string rows_text(const FusedKernel::Rows& r) {
  return (r.axis != 0 ? " axis=" + std::to_string(r.axis) : std::string()) +
         (r.mode == nx::ops::IndexMode::drop ? " mode=drop" : "");
}

std::string slot_name(const FusedKernel& m, std::int32_t k) {
  const FusedKernel::Slot& s = m.slots[std::size_t(k)];
  switch (s.source) {
    case FusedKernel::Source::scalar: return sreg(s.reg);
    case FusedKernel::Source::tensor:
    case FusedKernel::Source::element:
    case FusedKernel::Source::rows:
    case FusedKernel::Source::columns:
    case FusedKernel::Source::broadcast:
    case FusedKernel::Source::whole: return treg(s.reg);
    case FusedKernel::Source::indexed: {  // t3[t5]: t3's rows at the indices in t5 (t3[t5 axis=1 mode=drop])
      const auto g = std::find_if(m.indexed.begin(), m.indexed.end(), [&](const auto& g) { return g.slot == k; });
      return treg(s.reg) + "[" + slot_name(m, s.indices) + rows_text(g->rows) + "]";
    }
    case FusedKernel::Source::view: return treg(s.reg) + "@" + std::to_string(s.offset);
    case FusedKernel::Source::computed: return s.reg >= 0 ? treg(s.reg) : std::string("m").append(std::to_string(k));
  }
  return "";
}

// "  ; in place of t1 or t2" (operands that die there) or "  ; in t5's
// buffer" (a dead value's): where a result may be written.
std::string buffer_text(std::span<const std::int32_t> donors, std::int32_t recycled) {
  std::string out;
  for (std::size_t k = 0; k < donors.size() && donors[k] >= 0; ++k)
    out += (k == 0 ? "  ; in place of " : " or ") + treg(donors[k]);
  return recycled >= 0 ? out + "  ; in " + treg(recycled) + "'s buffer" : out;
}

std::string fused_text(const FusedKernel& m) {
  std::string out;
  using Over = FusedKernel::Step::Over;
  for (const FusedKernel::Step& s : m.steps) {
    out += "  " + step_text(m, s);
    // (a step over the block's rows: "per row"; one reducing or spreading them: their length)
    if (s.over == Over::rows) out += "  ; per row";
    if (s.over == Over::paired) out += "  ; rows read in place";
    if (s.over == Over::reduce || s.over == Over::spread) out += "  ; rows of " + std::to_string(m.row);
    const FusedKernel::Slot& result = m.slots[std::size_t(s.out)];
    out += buffer_text(result.donors, result.recycled);
    out += '\n';
  }
  for (const FusedKernel::Reduction& r : m.reductions) {
    out += "  " + reg(r.out) + " = " + std::string(nx::ops::info(r.prim).name) + " " + slot_name(m, r.slot);
    if (!r.shape.empty()) out += "  ; rows of " + std::to_string(m.reduced);
    out += '\n';
  }
  for (const FusedKernel::Scattered& s : m.scatters)
    out += "  " + treg(s.out) + " = scatter_add " + slot_name(m, s.operand) + " " + slot_name(m, s.indices) + " " +
           slot_name(m, s.slot) + (s.rows.axis != 0 || s.rows.mode != nx::ops::IndexMode::clamp ? "  ;" : "") +
           rows_text(s.rows) + "\n";
  return out;
}

// "  ; hoisted from scan 0" (or "invoke 1", an iterate): an instruction
// computing a capture the hoisting pass moved out of that loop.
std::string hoisted_text(const Code& code, std::size_t pc) {
  for (const Code::Hoisted& h : code.hoisted) {
    if (h.instruction != pc) continue;
    const Instruction& loop = code.instructions[h.loop];
    return std::string("  ; hoisted from ") + (loop.op == Op::scan ? "scan " : "invoke ") + std::to_string(loop.aux);
  }
  return "";
}

}  // namespace

std::string site_text(const Code& code, std::size_t pc) {
  const rune::detail::CallSite site = code.site_of(pc);
  return site ? "  ; " + nx::ops::describe(site) : "";
}

std::string instruction_text(const Code& code, const Instruction& in) {
  std::string name(info(in.op).name);
  name.resize(std::max<std::size_t>(name.size(), 10), ' ');
  std::string out = name + " ";
  switch (in.op) {
    case Op::call:
    case Op::construct:
    case Op::check: {
      const Call& c = code.calls[std::size_t(in.aux)];
      const std::string what = in.op == Op::call ? std::string(nx::ops::info(c.equation->prim).name)
                                                 : std::string(ir::entry_point(*c.equation));
      out += c.outputs.empty() ? what : joined(c.outputs) + " = " + what;
      return c.inputs.empty() ? out : out.append(" ").append(joined(c.inputs));
    }
    case Op::fused: {
      const Registers written = writes(code, in);
      return out + joined({written.data(), written.size()}) + " = fused " + std::to_string(in.aux);
    }
    case Op::scan: {
      const ScanOp& s = code.scans[std::size_t(in.aux)];
      return out + joined(s.outputs) + " = scan " + std::to_string(in.aux) + " " + joined(s.inputs);
    }
    case Op::body:
    case Op::cond:
    case Op::iterate: {
      const Invoke& i = code.invokes[std::size_t(in.aux)];
      return out + joined(i.outputs) + " = invoke " + std::to_string(in.aux) + " " + joined(i.inputs);
    }
    case Op::release: return out + joined(code.releases[std::size_t(in.aux)]);
    case Op::box: return out + treg(in.dst) + " = " + sreg(in.a);
    case Op::load: return out + sreg(in.dst) + " = " + treg(in.a) + (in.b ? "@" + std::to_string(in.b) : "");
    case Op::unary:
    case Op::binary: out += sreg(in.dst) + " = " + std::string(nx::ops::info(in.prim).name); break;
    case Op::convert: out += sreg(in.dst) + " = convert to " + std::string(nx::name(code.scalar_types[std::size_t(in.dst)])); break;
    default: out += sreg(in.dst) + " ="; break;
  }
  for (Location at : reads(code, in)) out.append(" ").append(reg(at));
  return out;
}

std::string register_text(const Code& code, const Frame& frame, Location at) {
  const nx::Tensor value = read(code, frame, at);
  if (!value.defined()) return reg(at) + " = (unset)";
  if (value.numel() <= 8) return reg(at) + " = " + nx::to_string(value);  // small: its elements too
  return reg(at) + " = " + std::string(nx::name(value.dtype())) + " " + nx::to_string(value.shape());
}

std::string trace_line(const Code& code, const Instruction& in, const Frame& frame) {
  std::string out = instruction_text(code, in);
  for (Location at : writes(code, in)) out += "  ; " + register_text(code, frame, at);
  return out;
}

std::string step_text(const FusedKernel& m, const FusedKernel::Step& s) {
  std::string out = slot_name(m, s.out) + " = " +
                    (s.over == FusedKernel::Step::Over::spread ? std::string("spread") : std::string(nx::ops::info(s.prim).name));
  if (s.family == nx::ops::Family::convert && s.prim == nx::ops::Prim::convert)
    out += " to " + std::string(nx::name(m.slots[std::size_t(s.out)].dtype));
  for (std::int32_t in : s.inputs()) out.append(" ").append(slot_name(m, in));
  return out;
}

std::string listing(const Code& code, bool source_lines) {
  std::string out = "bytecode: " + std::to_string(code.scalars.size()) + " scalar registers, " +
                    std::to_string(code.tensors.size()) + " tensor registers\n";
  out += "  params  " + joined(code.params) + "\n  results " + joined(code.results) + "\n";
  Frame initial(code);
  for (Location at : code.constants) out += "  const   " + register_text(code, initial, at) + "\n";
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc) {
    std::string at = std::to_string(pc);
    at.insert(0, at.size() < 4 ? 4 - at.size() : 0, ' ');
    const Instruction& in = code.instructions[pc];
    out += at + "  " + instruction_text(code, in);
    if (in.op == Op::call) out += buffer_text({}, code.calls[std::size_t(in.aux)].recycled);
    out += hoisted_text(code, pc);
    if (source_lines) out += site_text(code, pc);
    out += "\n";
  }
  for (std::size_t k = 0; k < code.kernels.size(); ++k) {
    const FusedKernel& m = code.kernels[k];
    const bool rows = std::any_of(m.slots.begin(), m.slots.end(), [&m](const FusedKernel::Slot& s) {
      return s.source == FusedKernel::Source::rows || s.source == FusedKernel::Source::columns ||
             (s.source == FusedKernel::Source::indexed && m.row > 0) || s.shape >= 0;
    });
    out += "fused " + std::to_string(k) + ": " + nx::to_string(m.shape) + ", " + std::to_string(m.steps.size()) +
           " steps" + (rows ? ", rows of " + std::to_string(m.row) : "") + "\n" + fused_text(m);
  }
  for (std::size_t k = 0; k < code.scans.size(); ++k) {
    const ScanOp& s = code.scans[k];
    out += "scan " + std::to_string(k) + ": " + std::to_string(s.info.length) + " rows, carry " +
           std::to_string(s.info.carry_count) + ", xs " + std::to_string(s.info.xs_count) + "; its step" +
           (s.native->promoted() ? " (promoted to machine code)" : "") + ":\n" + indented(listing(*s.step, source_lines), "  ");
  }
  for (std::size_t k = 0; k < code.invokes.size(); ++k) {
    const Invoke& i = code.invokes[k];
    const std::string word(ir::entry_point(*i.equation));
    for (std::size_t c = 0; c < i.codes.size(); ++c)
      out += "invoke " + std::to_string(k) + " (" + word + "), program " + std::to_string(c) +
             (i.native->promoted() ? " (promoted to machine code)" : "") + ":\n" + indented(listing(*i.codes[c], source_lines), "  ");
  }
  return out;
}

namespace {

// The code of `codes` holding `in` (the first when none does).
const Code& holding(const std::vector<std::shared_ptr<const Code>>& codes, const Instruction* in) {
  for (const auto& c : codes)
    if (in >= c->instructions.data() && in < c->instructions.data() + c->instructions.size()) return *c;
  return *codes[0];
}

// A unit's entry: why it stays on the VM, or its machine code.
void native_unit(const std::string& name, const native::Unit& unit, const char* why, const Code& code,
                 const Instruction* culprit, const std::string& assembly, const char* work, std::string& out) {
  if (why) {
    out += name + ": stays on the VM: " + why + (culprit ? " (" + instruction_text(code, *culprit) + ")" : "") + "\n";
    return;
  }
  const std::string state =
      unit.promoted()   ? "promoted to machine code"
      : unit.after() < 0 ? "on the VM (its function's native_after is negative); its machine code would be"
                         : "on the VM until it has run " + std::to_string(unit.after()) + " " + work + " (" +
                               std::to_string(unit.work()) + " so far); its machine code will be";
  out += name + ": " + state + ":\n" + indented(assembly, "  ");
}

// The fused kernels, scans and iterates of a code and of its sub-codes, each named by
// where it is.
void native_units(const Code& code, const std::string& where, std::string& out) {
  for (std::size_t k = 0; k < code.kernels.size(); ++k) {
    const FusedKernel& m = code.kernels[k];
    const char* why = native::fused_refusal(m);
    native_unit(where + "fused " + std::to_string(k), *m.native, why, code, nullptr, why ? "" : native::fused_listing(m),
                "elements", out);
  }
  for (std::size_t k = 0; k < code.scans.size(); ++k) {
    const ScanOp& s = code.scans[k];
    const std::string name = where + "scan " + std::to_string(k);
    const Instruction* culprit = nullptr;
    const char* why = native::scan_refusal(s, culprit);
    native_unit(name, *s.native, why, *s.step, culprit, why ? "" : native::scan_listing(s), "rows", out);
    native_units(*s.step, name + " > ", out);
  }
  for (std::size_t k = 0; k < code.invokes.size(); ++k) {
    const Invoke& it = code.invokes[k];
    const std::string name = where + "invoke " + std::to_string(k);
    if (std::holds_alternative<ir::IterateInfo>(it.equation->info)) {
      const Instruction* culprit = nullptr;
      const char* why = native::iterate_refusal(it, culprit);
      native_unit(name + " (iterate)", *it.native, why, holding(it.codes, culprit), culprit, why ? "" : native::iterate_listing(it), "trips",
                  out);
    }
    for (std::size_t c = 0; c < it.codes.size(); ++c)
      native_units(*it.codes[c], name + ", program " + std::to_string(c) + " > ", out);
  }
}

}  // namespace

std::string native_listing(const Code& code) {
  if (!native::built()) return "this build has no machine-code tier (meson -Dnative)\n";
  std::string out = native::mode() == native::Mode::off ? "RUNE_NATIVE=off: nothing is promoted\n" : "";
  native_units(code, "", out);
  return out.empty() ? "no unit the machine-code tier promotes (it promotes fused kernels, scans and iterates)\n" : out;
}

}  // namespace rune::vm
