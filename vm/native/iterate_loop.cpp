// An iterate's loop in machine code (x86-64, System V): until's
// instructions, the stop tested, the step's instructions (trip.hpp), the
// carry moved back, in turn; the float carry held in xmm registers across
// trips, until's carry parameters and the step's the same registers.
#include <optional>

#include <asmjit/x86.h>

#include "ir/program.hpp"
#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/trip.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;

// General registers: until's frame, the step's frame, the trips run and
// the most allowed, all kept by callees; rax and rdx are scratch.
const x86::Gp until_scalars = x86::rbx, step_scalars = x86::r15, trips = x86::r13, most = x86::r14;

const ir::IterateInfo& info_of(const Invoke& it) { return std::get<ir::IterateInfo>(it.equation->info); }

// The parameters every trip reads as the loop left them: until's captures
// and the step's.
std::span<const Location> until_invariant(const Invoke& it) {
  const ir::IterateInfo& info = info_of(it);
  return std::span(it.codes[0]->params).subspan(std::size_t(info.carry_count), std::size_t(info.until_captures));
}
std::span<const Location> step_invariant(const Invoke& it) {
  return std::span(it.codes[1]->params).subspan(std::size_t(info_of(it).carry_count) + 1);
}

class IterateEmitter {
 public:
  IterateEmitter(x86::Assembler& as, const Invoke& it, bool comments)
      : as_(as), until_(*it.codes[0]), step_(*it.codes[1]), carry_(std::size_t(info_of(it).carry_count)) {
    frames_.add(until_, until_scalars);
    frames_.add(step_, step_scalars);
    std::vector<Event> events;
    add_instructions(frames_, 0, events);
    boundary_ = events.size();
    Event boundary;  // the carry and the stop go from until to the step
    for (std::size_t k = 0; k < carry_; ++k) {
      boundary.reads.push_back(until_key(k));
      boundary.writes.push_back(step_key(k));
    }
    boundary.reads.push_back(stop());
    boundary.writes.push_back(step_key(carry_));
    events.push_back(std::move(boundary));
    add_instructions(frames_, 1, events);
    Event end;  // the trip's end reads the step's carry out
    std::vector<std::int32_t> params;
    for (std::size_t k = 0; k < carry_; ++k) {
      end.reads.push_back(frames_.key(1, step_.results[k].index));
      carry_moves_.push_back({frames_.key(1, step_.results[k].index), until_key(k)});
      params.push_back(until_key(k));
    }
    events.push_back(std::move(end));
    trip_.emplace(as, frames_, std::move(events), comments);
    pinned_ = trip_->pin(params);
  }

  void loop() {
    Trip& t = *trip_;
    const asmjit::Label top = as_.newLabel(), exit = as_.newLabel();
    for (const x86::Gp& saved : {x86::rbx, x86::r13, x86::r14, x86::r15}) as_.push(saved);
    as_.sub(x86::rsp, 24);  // a call-out's two stack arguments, 16-byte aligned
    as_.mov(until_scalars, x86::rdi);
    as_.mov(step_scalars, x86::rsi);
    as_.mov(most, x86::rdx);
    as_.xor_(trips.r32(), trips.r32());
    t.load(pinned_);
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    t.start(pinned_);
    for (std::size_t e = 0; e < boundary_; ++e) t.instruction(e);
    test_stop(exit);
    cross_boundary();
    for (std::size_t e = boundary_ + 1; e + 1 < t.size(); ++e) t.instruction(e);
    t.move_carry(carry_moves_, pinned_);
    as_.inc(trips);
    as_.jmp(top);
    as_.bind(exit);
    as_.add(x86::rsp, 24);
    for (const x86::Gp& saved : {x86::r15, x86::r14, x86::r13, x86::rbx}) as_.pop(saved);
    as_.ret();
  }

 private:
  std::int32_t until_key(std::size_t k) const { return frames_.key(0, until_.params[k].index); }
  std::int32_t step_key(std::size_t k) const { return frames_.key(1, step_.params[k].index); }
  std::int32_t stop() const { return frames_.key(0, until_.results[0].index); }

  // A true stop ends the loop with the carry (until's parameters) at home:
  // 0. Else past the most trips, 1: the caller raises (the stop at home).
  void test_stop(const asmjit::Label& exit) {
    const asmjit::Label go_on = as_.newLabel(), step = as_.newLabel();
    as_.cmp(frames_.home(stop()), 0);
    as_.je(go_on);
    Trip::Pinned cached;  // (the carry's values in xmm registers now)
    for (std::size_t k = 0; k < carry_; ++k)
      if (const int xmm = trip_->cache().find(until_key(k)); xmm >= 0) cached.push_back({xmm, until_key(k)});
    trip_->store(cached);
    as_.xor_(x86::eax, x86::eax);
    as_.jmp(exit);
    as_.bind(go_on);
    as_.cmp(trips, most);
    as_.jne(step);
    as_.mov(x86::eax, 1);
    as_.jmp(exit);
    as_.bind(step);
  }

  // The step's carry parameters take until's registers (no code when they
  // are in xmm registers); the stop is copied.
  void cross_boundary() {
    Trip& t = *trip_;
    XmmCache& cache = t.cache();
    for (std::size_t k = 0; k <= carry_; ++k) {
      const std::int32_t from = k < carry_ ? until_key(k) : stop(), to = step_key(k);
      const std::int32_t next = t.written(boundary_, k);  // (until's values are dead past here)
      if (next == never) {
        cache.read(from, never);
      } else if (!is_float(frames_.type(to))) {
        t.copy(frames_.home(to), frames_.home(from), frames_.size_of(to));
      } else if (const int xmm = cache.find(from); xmm >= 0) {
        cache.define(xmm, to, next);
      } else {
        const int fresh = cache.allocate(0);
        move_scalar(as_, x86::xmm(std::uint32_t(fresh)), frames_.home(from), frames_.is_double(from));
        cache.define(fresh, to, next);
      }
    }
  }

  x86::Assembler& as_;
  const Code &until_, &step_;
  std::size_t carry_;
  Frames frames_;
  std::size_t boundary_ = 0;
  std::vector<std::pair<std::int32_t, std::int32_t>> carry_moves_;  // (the step's result, until's parameter)
  std::optional<Trip> trip_;
  Trip::Pinned pinned_;  // until's carry parameters
};

}  // namespace

const char* iterate_refusal(const Invoke& it, const Instruction*& culprit) {
  if (const char* why = code_refusal(*it.codes[0], until_invariant(it), culprit)) return why;
  return code_refusal(*it.codes[1], step_invariant(it), culprit);
}

const void* emit_iterate(const void* unit, const char*& why, const Instruction*& culprit) {
  const Invoke& it = *static_cast<const Invoke*>(unit);
  if ((why = iterate_refusal(it, culprit))) return nullptr;
  return assemble([&](x86::Assembler& as) { IterateEmitter(as, it, false).loop(); }, why);
}

std::string iterate_listing(const Invoke& it) {
  const Instruction* culprit = nullptr;
  if (iterate_refusal(it, culprit)) return "";
  return assembly([&](x86::Assembler& as) { IterateEmitter(as, it, true).loop(); });
}

}  // namespace rune::vm::native
