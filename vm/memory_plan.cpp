// The memory plan. Liveness is read from the bytecode in the order it runs:
// the last instruction reading each tensor register. Every register is
// written once per run of its code (a scan's step runs again on a frame
// whose registers it writes before reading), so a value whose last reader
// is a map kernel is dead after it.
#include "vm/memory_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "ops/concrete.hpp"
#include "vm/kernel_memory.hpp"
#include "vm/machine.hpp"

namespace rune::vm {
namespace {

// Calls each(register) for every tensor register the instruction reads.
template <class Each> void tensors_read(const Code& code, const Instruction& in, Each each) {
  auto locations = [&](const std::vector<Location>& at) {
    for (Location l : at)
      if (!l.scalar) each(l.index);
  };
  switch (in.op) {
    case Op::load: each(in.a); break;
    case Op::call:
    case Op::construct:
    case Op::check:
      for (std::int32_t r : code.calls[std::size_t(in.aux)].inputs) each(r);
      break;
    case Op::map:
      for (const MapKernel::Slot& s : code.maps[std::size_t(in.aux)].slots)
        if (s.source != MapKernel::Source::computed && s.source != MapKernel::Source::scalar) each(s.reg);
      break;
    case Op::scan: locations(code.scans[std::size_t(in.aux)].inputs); break;
    case Op::body:
    case Op::cond:
    case Op::iterate: locations(code.invokes[std::size_t(in.aux)].inputs); break;
    default: break;  // scalar registers only
  }
}

// The donors of one kernel at instruction pc: for each written slot, the
// operand slots that die here and that no later step reads (another
// written slot may list them too: the first to find one free takes it).
void choose_donors(MapKernel& m, std::size_t pc, const std::vector<std::size_t>& last_read,
                   const std::vector<bool>& kept) {
  std::vector<std::ptrdiff_t> last_step(m.slots.size(), -1);
  std::vector<int> slots_of_register(kept.size(), 0);
  for (std::size_t k = 0; k < m.steps.size(); ++k)
    for (std::int32_t in : m.steps[k].inputs()) last_step[std::size_t(in)] = std::ptrdiff_t(k);
  for (const MapKernel::Slot& s : m.slots)
    if (s.reg >= 0 && s.source != MapKernel::Source::scalar) ++slots_of_register[std::size_t(s.reg)];
  for (std::size_t k = 0; k < m.steps.size(); ++k) {
    MapKernel::Slot& out = m.slots[std::size_t(m.steps[k].out)];
    if (out.reg < 0) continue;
    std::size_t listed = 0;
    for (std::size_t j = 0; j < m.slots.size() && listed < out.donors.size(); ++j) {
      const MapKernel::Slot& s = m.slots[j];
      const bool dies_here = s.source == MapKernel::Source::tensor && !kept[std::size_t(s.reg)] &&
                             last_read[std::size_t(s.reg)] == pc && slots_of_register[std::size_t(s.reg)] == 1;
      if (dies_here && s.dtype == out.dtype && last_step[j] <= std::ptrdiff_t(k)) out.donors[listed++] = std::int32_t(j);
    }
  }
}

bool in_order_and_own(const nx::detail::TensorImpl& impl) {
  return !impl.storage->borrowed && impl.offset == 0 && nx::ops::is_contiguous(impl);
}

bool held_alone(const nx::Tensor& t) {
  const nx::detail::TensorImpl& impl = *t.impl();
  return !impl.donated_to_call && impl.refs.load(std::memory_order_acquire) == 1 &&
         impl.storage->refs.load(std::memory_order_acquire) == 1 && in_order_and_own(impl);
}

// How many of the frame's registers view `storage`.
std::size_t registers_viewing(const Frame& f, const nx::detail::Storage* storage) {
  std::size_t views = 0;
  for (const nx::Tensor& t : f.tensors) views += t.defined() && t.impl()->storage.get() == storage;
  return views;
}

bool donated_alone(const Frame& f, const nx::Tensor& t) {
  const nx::detail::TensorImpl& impl = *t.impl();
  return impl.donated_to_call && in_order_and_own(impl) && registers_viewing(f, impl.storage.get()) == 1;
}

// The caller's buffer for result slot `slot`, when the kernel may compute it
// there: the buffer overlaps no argument, or is exactly the memory of one
// that dies in this kernel (one of the slot's donors) and that no other
// register views.
bool into_callers_buffer(const MapKernel& m, const MapKernel::Slot& slot, const Frame& f) {
  const nx::detail::Storage& buffer = *f.into[std::size_t(slot.result)].impl()->storage;
  std::ptrdiff_t overlapped = -1;
  for (std::size_t j = 0; j < f.args.size(); ++j)
    if (overlap(*f.args[j].impl()->storage, buffer)) {
      if (overlapped >= 0) return false;
      overlapped = std::ptrdiff_t(j);
    }
  if (overlapped < 0) return true;
  const nx::Tensor& arg = f.args[std::size_t(overlapped)];
  const Location at = f.code->params[std::size_t(overlapped)];
  if (at.scalar || arg.impl()->storage->data != buffer.data || arg.impl()->storage->bytes != buffer.bytes ||
      arg.impl()->offset != 0)
    return false;
  const bool dies_here = std::any_of(slot.donors.begin(), slot.donors.end(), [&](std::int32_t d) {
    return d >= 0 && m.slots[std::size_t(d)].reg == at.index;
  });
  return dies_here && registers_viewing(f, arg.impl()->storage.get()) == 1;  // (its own register)
}

// The registers written by the calls and map kernels before each
// instruction, with their types: where a later call may find a buffer of its
// result's type that is dead.
struct Written {
  std::int32_t reg;
  nx::ops::TensorType type;
  std::size_t at;  // the instruction writing it
};

std::vector<Written> written_tensors(const Code& code) {
  std::vector<Written> written;
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc) {
    const Instruction& in = code.instructions[pc];
    if (in.op == Op::call) {
      const Call& call = code.calls[std::size_t(in.aux)];
      written.push_back({call.outputs[0], call.type, pc});
    } else if (in.op == Op::map) {
      const MapKernel& m = code.maps[std::size_t(in.aux)];
      for (const MapKernel::Slot& s : m.slots)
        if (s.source == MapKernel::Source::computed && s.reg >= 0) written.push_back({s.reg, {s.dtype, m.shape}, pc});
    }
  }
  return written;
}

// The donors of a call at pc whose rule computes into a given buffer:
// registers of its result's type written and last read before it.
void choose_call_donors(Call& call, std::size_t pc, const std::vector<Written>& written,
                        const std::vector<std::size_t>& last_read, const std::vector<bool>& kept) {
  std::size_t listed = 0;
  for (const Written& w : written) {
    if (listed == call.donors.size() || w.at >= pc) break;
    const std::size_t r = std::size_t(w.reg);
    if (!kept[r] && last_read[r] > w.at && last_read[r] < pc && w.type.dtype == call.type.dtype &&
        w.type.shape == call.type.shape)
      call.donors[listed++] = w.reg;
  }
}

// The result of the code that register `reg` is, or -1.
std::int32_t result_index(const Code& code, std::int32_t reg) {
  const auto result = std::find(code.results.begin(), code.results.end(), Location{false, reg});
  return result == code.results.end() ? -1 : std::int32_t(result - code.results.begin());
}

}  // namespace

void plan_memory(Code& code, bool parameters) {
  std::vector<bool> kept(code.tensors.size(), false);
  for (const std::vector<Location>* held : {&code.params, &code.results, &code.constants})
    if (held != &code.params || !parameters)
      for (Location at : *held)
        if (!at.scalar) kept[std::size_t(at.index)] = true;
  std::vector<std::size_t> last_read(code.tensors.size(), 0);
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc)
    tensors_read(code, code.instructions[pc], [&](std::int32_t r) { last_read[std::size_t(r)] = pc; });
  const std::vector<Written> written = written_tensors(code);
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc) {
    const Instruction& in = code.instructions[pc];
    if (in.op == Op::call && nx::ops::rules(in.prim).into) {
      Call& call = code.calls[std::size_t(in.aux)];
      choose_call_donors(call, pc, written, last_read, kept);
      call.result = result_index(code, call.outputs[0]);
    }
    if (in.op != Op::map) continue;
    MapKernel& m = code.maps[std::size_t(in.aux)];
    choose_donors(m, pc, last_read, kept);
    plan_kernel_memory(m);
    for (MapKernel::Slot& s : m.slots)
      if (s.source == MapKernel::Source::computed && s.reg >= 0) s.result = result_index(code, s.reg);
  }
}

bool overlap(const nx::detail::Storage& a, const nx::detail::Storage& b) {
  const char *a_first = static_cast<const char*>(a.data), *b_first = static_cast<const char*>(b.data);
  return a_first < b_first + b.bytes && b_first < a_first + a.bytes;
}

nx::Tensor buffer_for(const MapKernel& m, const MapKernel::Slot& slot, Frame& f) {
  if (slot.result >= 0 && !f.into.empty() && into_callers_buffer(m, slot, f)) return f.into[std::size_t(slot.result)];
  for (std::int32_t candidate : slot.donors) {
    if (candidate < 0) break;
    nx::Tensor& donor = f.tensors[std::size_t(m.slots[std::size_t(candidate)].reg)];
    if (!donor.defined()) continue;  // (taken by another written slot)
    if (held_alone(donor)) return std::move(donor);
    if (donated_alone(f, donor)) return nx::ops::take_buffer(std::exchange(donor, nx::Tensor()));
  }
  return nx::ops::make_tensor(slot.dtype, m.shape);
}

nx::Tensor output_for(const Call& call, Frame& f) {
  if (call.result >= 0 && !f.into.empty()) {
    const nx::Tensor& buffer = f.into[std::size_t(call.result)];
    const bool apart = std::none_of(f.args.begin(), f.args.end(), [&](const nx::Tensor& arg) {
      return overlap(*arg.impl()->storage, *buffer.impl()->storage);
    });
    if (apart) return buffer;
  }
  for (std::int32_t candidate : call.donors) {
    if (candidate < 0) break;
    nx::Tensor& donor = f.tensors[std::size_t(candidate)];
    if (donor.defined() && held_alone(donor) && donor.shape() == call.type.shape && donor.dtype() == call.type.dtype)
      return std::move(donor);
  }
  return nx::ops::make_tensor(call.type.dtype, call.type.shape);
}

}  // namespace rune::vm
