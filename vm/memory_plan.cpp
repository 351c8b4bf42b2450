// The memory plan. Liveness is read from the bytecode in the order it runs:
// the last instruction reading each tensor register. Every register is
// written once per run of its code (a scan's step runs again on a frame
// whose registers it writes before reading), so a value whose last reader
// is a fused kernel is dead after it.
#include "vm/memory_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "vm/kernel_memory.hpp"
#include "vm/machine.hpp"
#include "vm/operands.hpp"

namespace rune::vm {
namespace {

// The donors of one kernel at instruction pc: for each written slot, the
// registers of operand slots that die here and that no later step reads
// (another written slot may list them too: the first to find one free
// takes it).
void choose_donors(FusedKernel& m, std::size_t pc, const std::vector<std::size_t>& last_read,
                   const std::vector<bool>& kept) {
  std::vector<std::ptrdiff_t> last_step(m.slots.size(), -1);
  std::vector<int> slots_of_register(kept.size(), 0);
  for (std::size_t k = 0; k < m.steps.size(); ++k)
    for (std::int32_t in : m.steps[k].inputs()) last_step[std::size_t(in)] = std::ptrdiff_t(k);
  for (const FusedKernel::Slot& s : m.slots)
    if (s.reg >= 0 && s.source != FusedKernel::Source::scalar) ++slots_of_register[std::size_t(s.reg)];
  for (std::size_t k = 0; k < m.steps.size(); ++k) {
    FusedKernel::Slot& out = m.slots[std::size_t(m.steps[k].out)];
    if (out.reg < 0) continue;
    std::size_t listed = 0;
    for (std::size_t j = 0; j < m.slots.size() && listed < out.donors.size(); ++j) {
      const FusedKernel::Slot& s = m.slots[j];
      const bool dies_here = s.source == FusedKernel::Source::tensor && !kept[std::size_t(s.reg)] &&
                             last_read[std::size_t(s.reg)] == pc && slots_of_register[std::size_t(s.reg)] == 1;
      if (dies_here && s.dtype == out.dtype && s.shape == out.shape && last_step[j] <= std::ptrdiff_t(k))
        out.donors[listed++] = s.reg;
    }
  }
}

// The buffers of dead values, by liveness over the bytecode: values written
// by calls, fused kernels and scans (whose types the code records) join the
// pool when their last reader has run, and a later result of their type takes one
// (the latest dead, the likeliest still in the caches) instead of a fresh
// allocation.
class Recycler {
 public:
  explicit Recycler(std::size_t registers) : type_(registers), pooled_(registers, false), given_(registers, false) {}

  // A value whose buffer may be recycled once it is dead (rune's own: not a
  // parameter the caller holds).
  void written(std::int32_t reg, nx::ops::TensorType type) {
    type_[std::size_t(reg)] = std::move(type);
    pooled_[std::size_t(reg)] = true;
  }
  void parameter(std::int32_t reg, nx::ops::TensorType type) { type_[std::size_t(reg)] = std::move(type); }

  // A dead register of this type for a result, or -1.
  std::int32_t take(const nx::ops::TensorType& type) {
    for (std::size_t k = pool_.size(); k-- > 0;) {
      const std::int32_t reg = pool_[k];
      const nx::ops::TensorType& t = *type_[std::size_t(reg)];
      if (t.dtype == type.dtype && t.shape == type.shape) {
        pool_.erase(pool_.begin() + std::ptrdiff_t(k));
        given_[std::size_t(reg)] = true;
        return reg;
      }
    }
    return -1;
  }

  void dead(std::int32_t reg) {
    if (pooled_[std::size_t(reg)]) pool_.push_back(reg);
  }
  bool pooled(std::int32_t reg) const { return pooled_[std::size_t(reg)]; }
  // Whether a later result takes reg's buffer (so reg is not released).
  bool given(std::int32_t reg) const { return given_[std::size_t(reg)]; }
  // Whether reg's value is known to be smaller than a page: releasing it
  // early would cost an instruction and save nothing worth it.
  bool small(std::int32_t reg) const {
    const std::optional<nx::ops::TensorType>& t = type_[std::size_t(reg)];
    return t && std::size_t(nx::numel(t->shape)) * nx::size_of(t->dtype) < 4096;
  }

 private:
  std::vector<std::optional<nx::ops::TensorType>> type_;
  std::vector<bool> pooled_, given_;
  std::vector<std::int32_t> pool_;
};

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
bool into_callers_buffer(const FusedKernel::Slot& slot, const Frame& f) {
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
  const bool dies_here = std::find(slot.donors.begin(), slot.donors.end(), at.index) != slot.donors.end();
  return dies_here && registers_viewing(f, arg.impl()->storage.get()) == 1;  // (its own register)
}

// Whether an instruction makes tensors: what follows a release must, or the
// release would only come before the frame's end (or, in a scan's step,
// before the next row writes the registers again).
bool makes_tensors(Op op) {
  switch (op) {
    case Op::call: case Op::fused: case Op::scan: case Op::body: case Op::cond: case Op::iterate:
    case Op::construct: case Op::box:
      return true;
    default:
      return false;
  }
}

// Puts a release after each instruction where values die (that no later
// result takes, not known to be small), when something making tensors
// follows.
void insert_releases(Code& code, const std::vector<std::vector<std::int32_t>>& dying) {
  std::vector<Instruction> with;
  bool later_makes = false;
  std::vector<bool> makes_after(code.instructions.size());
  for (std::size_t pc = code.instructions.size(); pc-- > 0;) {
    makes_after[pc] = later_makes;
    later_makes = later_makes || makes_tensors(code.instructions[pc].op);
  }
  std::vector<std::size_t> moved_to(code.instructions.size());  // each instruction's new pc
  std::vector<Code::Origin> origins;
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc) {
    moved_to[pc] = with.size();
    with.push_back(code.instructions[pc]);
    origins.push_back(code.origin_of(pc));
    if (dying[pc].empty() || !makes_after[pc]) continue;
    Instruction release;
    release.op = Op::release;
    release.aux = std::int32_t(code.releases.size());
    code.releases.push_back(dying[pc]);
    with.push_back(release);
    origins.emplace_back();
  }
  nx::ops::internal_assert(origins.size() == with.size(), "an origin per instruction");
  code.instructions = std::move(with);
  // (the side tables naming instructions by pc follow them)
  code.origins = std::move(origins);
  for (Code::Hoisted& h : code.hoisted) {
    h.instruction = moved_to[h.instruction];
    h.loop = moved_to[h.loop];
  }
}

// The tensor registers of the first `carries` results that a run of the
// code writes: not a parameter's or a constant's, which stay across runs.
std::vector<std::int32_t> carry_registers_written(const Code& code, std::size_t carries) {
  auto held_across_runs = [&](Location at) {
    for (const std::vector<Location>* held : {&code.params, &code.constants})
      if (std::find(held->begin(), held->end(), at) != held->end()) return true;
    return false;
  };
  std::vector<std::int32_t> written;
  for (std::size_t k = 0; k < carries; ++k)
    if (!code.results[k].scalar && !held_across_runs(code.results[k])) written.push_back(code.results[k].index);
  return written;
}

// The operand a call may write its result over (Call::donor), or -1: a
// dynamic_update_slice's operand that dies there (its result is the operand
// with a window written), read by no other input of it.
std::int32_t operand_written_over(const Call& call, nx::ops::Prim prim, std::size_t pc,
                                  const std::vector<std::size_t>& last_read, const std::vector<bool>& kept) {
  if (prim != nx::ops::Prim::dynamic_update_slice) return -1;
  const std::int32_t operand = call.inputs[0];
  if (kept[std::size_t(operand)] || last_read[std::size_t(operand)] != pc) return -1;
  return std::count(call.inputs.begin(), call.inputs.end(), operand) == 1 ? operand : -1;
}

// The result of the code that register `reg` is, or -1.
std::int32_t result_index(const Code& code, std::int32_t reg) {
  const auto result = std::find(code.results.begin(), code.results.end(), Location{false, reg});
  return result == code.results.end() ? -1 : std::int32_t(result - code.results.begin());
}

}  // namespace

void plan_memory(Code& code, Parameters params) {
  code.takes_donated = params.free > 0 && !params.carries;
  if (params.carries) code.emptied_after_run = carry_registers_written(code, params.free);
  const std::size_t registers = code.tensors.size();
  std::vector<bool> kept(registers, false);
  for (const std::vector<Location>* held : {&code.results, &code.constants})
    for (Location at : *held)
      if (!at.scalar) kept[std::size_t(at.index)] = true;
  for (std::size_t k = params.free; k < code.params.size(); ++k)
    if (!code.params[k].scalar) kept[std::size_t(code.params[k].index)] = true;
  constexpr std::size_t never = SIZE_MAX;
  std::vector<std::size_t> last_read(registers, never);
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc)
    for (Location at : reads(code, code.instructions[pc]))
      if (!at.scalar) last_read[std::size_t(at.index)] = pc;
  std::vector<std::vector<std::int32_t>> dying(code.instructions.size());
  for (std::size_t r = 0; r < registers; ++r)
    if (!kept[r] && last_read[r] != never) dying[last_read[r]].push_back(std::int32_t(r));
  Recycler recycler(registers);
  std::vector<bool> planned(registers, false);  // (written into a buffer this plan chooses)
  for (std::size_t k = 0; k < code.params.size(); ++k) {
    if (code.params[k].scalar) continue;
    const nx::ops::TensorType& type = code.program->types[std::size_t(code.program->params[k])];
    if (params.carries && k < params.free) recycler.written(code.params[k].index, type);
    else recycler.parameter(code.params[k].index, type);
  }
  for (std::size_t pc = 0; pc < code.instructions.size(); ++pc) {
    const Instruction& in = code.instructions[pc];
    std::vector<std::int32_t> donors;  // (dying here, and perhaps written over: not recycled)
    if (in.op == Op::call) {
      Call& call = code.calls[std::size_t(in.aux)];
      if (nx::ops::rules(in.prim).into) {
        call.donor = operand_written_over(call, in.prim, pc, last_read, kept);
        if (call.donor >= 0) donors.push_back(call.donor);
        else call.recycled = recycler.take(call.type);
        call.result = result_index(code, call.outputs[0]);
        planned[std::size_t(call.outputs[0])] = true;
      }
      recycler.written(call.outputs[0], call.type);
    } else if (in.op == Op::scan) {
      const ScanOp& scan = code.scans[std::size_t(in.aux)];
      for (std::size_t k = 0; k < scan.outputs.size(); ++k)
        if (!scan.outputs[k].scalar) recycler.written(scan.outputs[k].index, scan.output_types[k]);
    } else if (in.op == Op::fused) {
      FusedKernel& m = code.kernels[std::size_t(in.aux)];
      choose_donors(m, pc, last_read, kept);
      plan_kernel_memory(m);
      for (const FusedKernel::Reduction& r : m.reductions)
        if (!r.out.scalar) planned[std::size_t(r.out.index)] = true;
      for (const FusedKernel::Scattered& s : m.scatters) planned[std::size_t(s.out)] = true;
      for (FusedKernel::Slot& s : m.slots) {
        if (s.source != FusedKernel::Source::computed || s.reg < 0) continue;
        const nx::ops::TensorType type{s.dtype, m.shape_of(s)};
        // (a parameter as donor is written over only when donated: a dead value's buffer is the likelier)
        const bool own_donor = std::any_of(s.donors.begin(), s.donors.end(),
                                           [&](std::int32_t d) { return d >= 0 && recycler.pooled(d); });
        if (!own_donor) s.recycled = recycler.take(type);
        s.result = result_index(code, s.reg);
        planned[std::size_t(s.reg)] = true;
        recycler.written(s.reg, type);
        donors.insert(donors.end(), s.donors.begin(), s.donors.end());
      }
    }
    for (std::int32_t r : dying[pc])
      if (std::find(donors.begin(), donors.end(), r) == donors.end()) recycler.dead(r);
  }
  for (std::vector<std::int32_t>& regs : dying)
    std::erase_if(regs, [&](std::int32_t r) { return recycler.given(r) || recycler.small(r); });
  insert_releases(code, dying);
  code.results_apart = std::all_of(code.results.begin(), code.results.end(), [&](Location at) {
    return at.scalar || planned[std::size_t(at.index)];  // (a scalar result is boxed in a new tensor)
  });
}
bool overlap(const nx::detail::Storage& a, const nx::detail::Storage& b) {
  const char *a_first = static_cast<const char*>(a.data), *b_first = static_cast<const char*>(b.data);
  return a_first < b_first + b.bytes && b_first < a_first + a.bytes;
}

namespace {

// A dead value's buffer for a result, when nothing else holds it; the value
// let go either way.
nx::Tensor recycled_buffer(std::int32_t reg, Frame& f) {
  if (reg < 0) return {};
  nx::Tensor dead = std::move(f.tensors[std::size_t(reg)]);
  return dead.defined() && held_alone(dead) ? dead : nx::Tensor();
}

}  // namespace

nx::Tensor buffer_for(const FusedKernel& m, const FusedKernel::Slot& slot, Frame& f) {
  nx::Tensor recycled = recycled_buffer(slot.recycled, f);  // (let go whichever buffer is chosen)
  if (slot.result >= 0 && !f.into.empty() && into_callers_buffer(slot, f)) return f.into[std::size_t(slot.result)];
  for (std::int32_t candidate : slot.donors) {
    if (candidate < 0) break;
    nx::Tensor& donor = f.tensors[std::size_t(candidate)];
    if (!donor.defined()) continue;  // (taken by another written slot)
    if (held_alone(donor)) return std::move(donor);
    if (f.code->takes_donated && donated_alone(f, donor)) return nx::ops::take_buffer(std::exchange(donor, nx::Tensor()));
  }
  return recycled.defined() ? recycled : nx::ops::make_tensor(slot.dtype, m.shape_of(slot));
}

bool writes_over_operand(const Call& call, const Frame& f) {
  return call.donor >= 0 && held_alone(f.tensors[std::size_t(call.donor)]);
}

nx::Tensor output_for(const Call& call, Frame& f) {
  nx::Tensor recycled = recycled_buffer(call.recycled, f);
  if (call.result >= 0 && !f.into.empty()) {
    const nx::Tensor& buffer = f.into[std::size_t(call.result)];
    const bool apart = std::none_of(f.args.begin(), f.args.end(), [&](const nx::Tensor& arg) {
      return overlap(*arg.impl()->storage, *buffer.impl()->storage);
    });
    if (apart) return buffer;
  }
  return recycled.defined() ? recycled : nx::ops::make_tensor(call.type.dtype, call.type.shape);
}

}  // namespace rune::vm
