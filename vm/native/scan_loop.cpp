// A scan's loop in machine code (x86-64, System V): each trip reads its xs
// rows, runs the step's instructions (trip.hpp), writes its ys rows and
// moves the carry, the float carry held in xmm registers across trips.
#include <algorithm>

#include <optional>

#include <asmjit/x86.h>

#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/trip.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;

// General registers: the step frame's scalars, the words (rows, strides,
// ys), the row and the length, all kept by callees; rax and rdx are scratch.
const x86::Gp scalars = x86::rbx, words = x86::r12, row = x86::r13, length = x86::r14;

// The carry held in xmm registers across trips: at most this many.
constexpr int pinned_most = 12;

// The step's parameters neither carried nor rows: every trip reads them as
// the scan left them.
std::span<const Location> invariant_params(const ScanOp& scan) {
  return std::span(scan.step->params).subspan(std::size_t(scan.info.carry_count + scan.info.xs_count));
}

class ScanEmitter {
 public:
  ScanEmitter(x86::Assembler& as, const ScanOp& scan, bool comments) : as_(as), scan_(scan) {
    const Code& step = *scan.step;
    frames_.add(step, scalars);
    const std::size_t carry = std::size_t(scan.info.carry_count), xs_end = carry + std::size_t(scan.info.xs_count);
    for (std::size_t k = carry; k < xs_end; ++k)
      if (scan.rows_read[k - carry]) rows_.push_back(step.params[k].index);
    for (std::size_t k = carry; k < step.results.size(); ++k) ys_.push_back(step.results[k].index);
    std::vector<Event> events;
    add_instructions(frames_, 0, events);
    Event end;  // the trip's end reads the ys and the carry
    end.reads = ys_;
    for (std::size_t k = 0; k < carry; ++k) end.reads.push_back(step.results[k].index);
    events.push_back(std::move(end));
    trip_.emplace(as, frames_, std::move(events), comments);
  }

  void loop() {
    Trip& t = *trip_;
    const asmjit::Label top = as_.newLabel(), done = as_.newLabel();
    for (const x86::Gp& saved : {x86::rbx, x86::r12, x86::r13, x86::r14}) as_.push(saved);
    as_.sub(x86::rsp, 24);  // a call-out's two stack arguments, 16-byte aligned
    as_.mov(scalars, x86::rdi);
    as_.mov(words, x86::rsi);
    as_.mov(length, x86::rdx);
    as_.test(length, length);
    as_.jle(done);
    pin_carry();
    for (auto [xmm, param] : pinned_)
      frames_.is_double(param) ? as_.movsd(x86::xmm(std::uint32_t(xmm)), frames_.home(param))
                               : as_.movss(x86::xmm(std::uint32_t(xmm)), frames_.home(param));
    as_.xor_(row.r32(), row.r32());
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    start_trip();
    for (std::size_t e = 0; e + 1 < t.size(); ++e) t.instruction(e);
    write_ys();
    move_carry();
    as_.inc(row);
    as_.cmp(row, length);
    as_.jl(top);
    for (auto [xmm, param] : pinned_)
      frames_.is_double(param) ? as_.movsd(frames_.home(param), x86::xmm(std::uint32_t(xmm)))
                               : as_.movss(frames_.home(param), x86::xmm(std::uint32_t(xmm)));
    as_.bind(done);
    as_.add(x86::rsp, 24);
    for (const x86::Gp& saved : {x86::r14, x86::r13, x86::r12, x86::rbx}) as_.pop(saved);
    as_.ret();
  }

 private:
  x86::Mem word(std::size_t k) const { return x86::qword_ptr(words, std::int32_t(8 * k)); }

  // The float carry read in a trip (or passed on), each in an xmm register
  // of its own at the top of every trip.
  void pin_carry() {
    for (std::size_t k = 0; k < std::size_t(scan_.info.carry_count); ++k) {
      const std::int32_t param = scan_.step->params[k].index;
      if (int(pinned_.size()) == pinned_most) break;
      if (!is_float(frames_.type(param)) || trip_->first(param) == never) continue;
      if (std::ranges::any_of(pinned_, [&](auto p) { return p.second == param; })) continue;
      pinned_.push_back({int(pinned_.size()), param});
    }
  }

  // The top of a trip: the pinned carry in its registers, this row's xs read.
  void start_trip() {
    XmmCache& cache = trip_->cache();
    cache.clear();
    for (auto [xmm, param] : pinned_) cache.define(xmm, param, trip_->first(param));
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      const std::int32_t param = rows_[k];
      if (trip_->first(param) == never) continue;
      as_.mov(x86::rax, row);
      as_.imul(x86::rax, word(rows_.size() + k));
      as_.add(x86::rax, word(k));
      const std::size_t size = frames_.size_of(param);
      const x86::Mem at = x86::ptr(x86::rax, 0, std::uint32_t(size));
      if (is_float(frames_.type(param))) {
        const int xmm = cache.allocate(0);
        frames_.is_double(param) ? as_.movsd(x86::xmm(std::uint32_t(xmm)), at) : as_.movss(x86::xmm(std::uint32_t(xmm)), at);
        cache.define(xmm, param, trip_->first(param));
      } else {
        trip_->copy(frames_.home(param), at, size);
      }
    }
  }

  void write_ys() {
    const std::size_t first = 2 * rows_.size();
    for (std::size_t k = 0; k < ys_.size(); ++k) {
      const std::int32_t reg = ys_[k];
      const std::size_t size = frames_.size_of(reg);
      as_.mov(x86::rdx, word(first + k));
      const std::uint32_t shift = size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0;
      const x86::Mem at = x86::ptr(x86::rdx, row, shift, 0, std::uint32_t(size));
      if (const int xmm = trip_->cache().find(reg); xmm >= 0)
        frames_.is_double(reg) ? as_.movsd(at, x86::xmm(std::uint32_t(xmm))) : as_.movss(at, x86::xmm(std::uint32_t(xmm)));
      else
        trip_->copy(at, frames_.home(reg), size);
    }
  }

  // The carry from the results to the parameters, all at once.
  void move_carry() {
    std::vector<Trip::Move> moves;
    for (std::size_t k = 0; k < std::size_t(scan_.info.carry_count); ++k) {
      const std::int32_t result = scan_.step->results[k].index, param = scan_.step->params[k].index;
      Place to{Place::home, param};
      for (auto [xmm, pinned] : pinned_)
        if (pinned == param) to = {Place::xmm, xmm};
      moves.push_back({trip_->place(result), to, param});
    }
    trip_->move_all(std::move(moves));
  }

  x86::Assembler& as_;
  const ScanOp& scan_;
  Frames frames_;
  std::vector<std::int32_t> rows_, ys_;  // the parameters of the xs rows read; the ys results
  std::optional<Trip> trip_;
  std::vector<std::pair<int, std::int32_t>> pinned_;  // (xmm register, carry parameter)
};

}  // namespace

bool built() { return true; }

const char* scan_refusal(const ScanOp& scan, const Instruction*& culprit) {
  return code_refusal(*scan.step, invariant_params(scan), culprit);
}

const void* emit_scan(const void* unit, const char*& why, const Instruction*& culprit) {
  const ScanOp& scan = *static_cast<const ScanOp*>(unit);
  if ((why = scan_refusal(scan, culprit))) return nullptr;
  asmjit::CodeHolder code;
  code.init(environment());
  x86::Assembler as(&code);
  ScanEmitter(as, scan, false).loop();
  return publish(code, why);
}

void release(const void* loop) { unpublish(const_cast<void*>(loop)); }

std::string scan_listing(const ScanOp& scan) {
  const Instruction* culprit = nullptr;
  if (scan_refusal(scan, culprit)) return "";
  asmjit::StringLogger logger;
  asmjit::CodeHolder code;
  code.init(environment());
  code.setLogger(&logger);
  x86::Assembler as(&code);
  ScanEmitter(as, scan, true).loop();
  return readable(logger.data());
}

}  // namespace rune::vm::native
