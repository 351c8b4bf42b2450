#include "vm/native/block_code.hpp"

#include <algorithm>
#include <bit>
#include <string_view>

#include "ops/kernels/kernels.hpp"

#include "vm/native/frames.hpp"

namespace rune::vm::native {

namespace {

using Kind = FusedKernel::Place::Kind;
using nx::ops::Prim;

// A slot's elements' stride in a block, as the block's addresses
// (vm/fused_kernel.cpp's Blocks::ptr) give them: -1 where the slot is
// placed per row (a kernel in rows).
std::int64_t block_stride(const FusedKernel::Place& p) {
  switch (p.kind) {
    case Kind::memory: return p.stride;
    case Kind::repeated: return 0;
    case Kind::temporary:
    case Kind::gathered:
    case Kind::columns: return 1;
    default: return -1;
  }
}

// The scratch registers a step computed in registers takes, or -1 where it
// is not.
int scratch_registers(Prim p, nx::DType t, const RunLimits& limits) {
  if (p == Prim::add || p == Prim::sub || p == Prim::mul || p == Prim::div || p == Prim::neg || p == Prim::abs ||
      p == Prim::sqrt)
    return 0;
  if (t != nx::DType::float32) return -1;
  return p == Prim::exp ? limits.exp_scratch : p == Prim::tanh ? limits.tanh_scratch : -1;
}

bool reads(const FusedKernel::Step& s, std::int32_t slot) { return std::ranges::count(s.inputs(), slot) > 0; }

class Planner {
 public:
  Planner(const FusedKernel& m, const RunLimits& limits) : m_(m), limits_(limits) {
    code_.stride.resize(m.slots.size());
    code_.written.assign(m.slots.size(), false);
    code_.streamed.assign(m.slots.size(), false);
    code_.limits = limits;
    for (std::size_t k = 0; k < m.slots.size(); ++k) {
      code_.stride[k] = block_stride(m.places[k]);
      code_.streamed[k] = k < m.streamed.size() && m.streamed[k];  // (none before the kernel's memory is planned)
    }
  }

  const char* plan() {
    if (!m_.reductions.empty()) return "it reduces whole values (the VM folds them block by block)";
    for (const FusedKernel::Step& s : m_.steps)
      if (s.over != FusedKernel::Step::Over::elements) return "it reads rows where their indices point";
    for (std::int32_t k = 0; k < std::int32_t(m_.steps.size()); ++k) add(k);
    const bool gains = std::ranges::any_of(code_.segments, [](const auto& s) { return s.run && s.steps.size() > 1; });
    if (!gains)
      return limits_.exp_scratch < 0
                 ? "no two of its steps in a row are + - * /, negation, sqrt or abs of one float type"
                 : "no two of its steps in a row are + - * /, negation, sqrt or abs of one float type (or float32 "
                   "exp or tanh)";
    for (const BlockCode::Segment& s : code_.segments) {
      if (!s.run) continue;
      mark_written(s);
      for (std::int32_t k : s.steps) {
        const Prim p = m_.steps[std::size_t(k)].prim;
        code_.calls_in_runs = code_.calls_in_runs || p == Prim::exp || p == Prim::tanh;
      }
    }
    return nullptr;
  }
  BlockCode& code() { return code_; }

 private:
  // Step k, computed in registers: its type a float, its operands of that
  // type, of one element or contiguous, its result contiguous.
  bool computable(const FusedKernel::Step& s) const {
    const nx::DType t = m_.slots[std::size_t(s.out)].dtype;
    if (scratch_registers(s.prim, t, limits_) < 0 || !is_float(t) || code_.stride[std::size_t(s.out)] != 1)
      return false;
    if (s.family != nx::ops::Family::binary && s.family != nx::ops::Family::unary) return false;
    for (std::int32_t in : s.inputs()) {
      const std::int64_t stride = code_.stride[std::size_t(in)];
      if (m_.slots[std::size_t(in)].dtype != t || (stride != 0 && stride != 1)) return false;
    }
    return true;
  }

  // Whether a slot computed by a run ending at step `last` is read after it
  // (or is a result of the kernel).
  bool written(std::int32_t slot, std::int32_t last) const {
    if (m_.slots[std::size_t(slot)].reg >= 0) return true;
    for (std::size_t k = std::size_t(last) + 1; k < m_.steps.size(); ++k)
      if (reads(m_.steps[k], slot)) return true;
    return false;
  }

  // Step k to the last run when it fits there, else a segment of its own.
  void add(std::int32_t k) {
    const FusedKernel::Step& s = m_.steps[std::size_t(k)];
    if (!computable(s)) {
      code_.segments.push_back({{k}, false, {}});
      return;
    }
    const nx::DType t = m_.slots[std::size_t(s.out)].dtype;
    if (!code_.segments.empty() && code_.segments.back().run && code_.segments.back().dtype == t) {
      BlockCode::Segment& run = code_.segments.back();
      run.steps.push_back(k);
      if (fits(run)) return;
      run.steps.pop_back();
    }
    code_.segments.push_back({{k}, true, t});
  }

  // The values of a run written to their slots.
  void mark_written(const BlockCode::Segment& run) {
    for (std::int32_t k : run.steps) {
      const std::int32_t out = m_.steps[std::size_t(k)].out;
      code_.written[std::size_t(out)] = written(out, run.steps.back());
    }
  }

  // Whether the run, its last step just added, fits the machine's registers.
  bool fits(const BlockCode::Segment& run) {
    mark_written(run);
    const RunRegisters r = run_registers(m_, code_, run);
    return r.vectors <= limits_.vectors && int(r.addressed.size()) <= limits_.pointers;
  }

  const FusedKernel& m_;
  RunLimits limits_;
  BlockCode code_;
};

// The vector registers of a run's pass: taken and given back, lowest first.
class Registers {
 public:
  int take(int except = -1) {
    std::uint64_t free = ~used_;
    if (except >= 0) free &= ~(std::uint64_t(1) << except);
    const int reg = std::countr_zero(free);
    used_ |= std::uint64_t(1) << reg;
    most_ = std::max(most_, reg + 1);
    return reg;
  }
  int claim(int reg) {
    used_ |= std::uint64_t(1) << reg;
    return reg;
  }
  void give(int reg) { used_ &= ~(std::uint64_t(1) << reg); }
  int most() const { return most_; }

 private:
  std::uint64_t used_ = 0;
  int most_ = 0;
};

}  // namespace

RunLimits run_limits(int vectors, int pointers, int exp_scratch, int tanh_scratch) {
  if (std::string_view(nx::ops::kernels::table().arch) == "generic") return {vectors, pointers};
  return {vectors, pointers, exp_scratch, tanh_scratch};
}

const char* block_code(const FusedKernel& m, const RunLimits& limits, std::optional<BlockCode>& out) {
  Planner planner(m, limits);
  if (const char* why = planner.plan()) return why;
  out.emplace(std::move(planner.code()));
  return nullptr;
}

const char* block_refusal(const FusedKernel& kernel, const RunLimits& limits) {
  std::optional<BlockCode> code;
  return block_code(kernel, limits, code);
}

RunRegisters run_registers(const FusedKernel& m, const BlockCode& code, const BlockCode::Segment& run) {
  RunRegisters r;
  Registers regs;
  std::vector<int> reg_of(m.slots.size(), -1);
  std::vector<std::size_t> last_read(m.slots.size(), 0);
  for (std::size_t j = 0; j < run.steps.size(); ++j)
    for (std::int32_t in : m.steps[std::size_t(run.steps[j])].inputs()) last_read[std::size_t(in)] = j;
  const auto hold_address = [&](std::int32_t slot) {
    if (std::ranges::find(r.addressed, slot) == r.addressed.end()) r.addressed.push_back(slot);
  };
  const auto mask = [&](bool abs) {  // (a sign mask, held: one of each kind at most)
    for (const RunRegisters::Held& h : r.held)
      if (h.slot < 0 && h.abs_mask == abs) return h.reg;
    r.held.push_back({-1, abs, regs.take()});
    return r.held.back().reg;
  };
  for (std::int32_t k : run.steps) {  // (what the pass holds first: the operands of one element, the masks)
    const FusedKernel::Step& s = m.steps[std::size_t(k)];
    for (std::int32_t in : s.inputs())
      if (code.stride[std::size_t(in)] == 0 && reg_of[std::size_t(in)] < 0) {
        reg_of[std::size_t(in)] = regs.take();
        r.held.push_back({in, false, reg_of[std::size_t(in)]});
      }
    if (s.prim == Prim::neg || s.prim == Prim::abs) mask(s.prim == Prim::abs);
  }
  for (std::size_t j = 0; j < run.steps.size(); ++j) {
    const FusedKernel::Step& s = m.steps[std::size_t(run.steps[j])];
    RunRegisters::Step step;
    step.index = run.steps[j];
    const auto operand = [&](std::int32_t slot) {
      RunRegisters::Operand o{slot, reg_of[std::size_t(slot)], false};
      if (o.reg < 0) {
        o.reg = reg_of[std::size_t(slot)] = regs.take();
        o.load = true;
        hold_address(slot);
      }
      return o;
    };
    const std::span<const std::int32_t> in = s.inputs();
    step.a = operand(in[0]);
    if (in.size() > 1) step.b = operand(in[1]);
    if (s.prim == Prim::neg || s.prim == Prim::abs) step.mask = mask(s.prim == Prim::abs);
    const auto dies = [&](std::int32_t slot) { return code.stride[std::size_t(slot)] != 0 && last_read[std::size_t(slot)] == j; };
    const bool a_dies = dies(in[0]);
    for (std::size_t k = 0; k < in.size(); ++k)
      if (dies(in[k]) && (k == 0 || in[k] != in[0])) {
        regs.give(reg_of[std::size_t(in[k])]);
        reg_of[std::size_t(in[k])] = -1;
      }
    // (the result in a's register when a dies here, else never in b's:
    // `movaps d, a` would overwrite b before it is read)
    step.out = a_dies ? regs.claim(step.a.reg) : regs.take(in.size() > 1 && in[1] != in[0] ? step.b.reg : -1);
    for (int k = scratch_registers(s.prim, m.slots[std::size_t(s.out)].dtype, code.limits); k-- > 0;)
      step.scratch.push_back(regs.take());
    for (int reg : step.scratch) regs.give(reg);
    step.write = code.written[std::size_t(s.out)];
    if (step.write) hold_address(s.out);
    reg_of[std::size_t(s.out)] = step.out;
    bool read_later = false;
    for (std::size_t later = j + 1; later < run.steps.size(); ++later)
      read_later = read_later || reads(m.steps[std::size_t(run.steps[later])], s.out);
    if (!read_later) {
      regs.give(step.out);
      reg_of[std::size_t(s.out)] = -1;
    }
    r.steps.push_back(step);
  }
  r.vectors = regs.most();
  return r;
}

}  // namespace rune::vm::native
