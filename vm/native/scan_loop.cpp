// A scan's loop in machine code (x86-64, System V): each trip reads its xs
// rows, runs the step's scalar instructions, writes its ys rows and moves
// the carry, with float carries held in xmm registers across trips. Inline:
// float32/float64 + - * / and negation (a sign flip), as the VM computes
// them (SSE2 scalar operations, never an FMA: its bits). Every other
// scalar instruction calls the row loop the VM calls (`Instruction::row`,
// one element), its operands at home.
#include <algorithm>
#include <array>
#include <utility>

#include <asmjit/x86.h>

#include "vm/listing.hpp"
#include "vm/native/native.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/xmm_cache.hpp"
#include "vm/operands.hpp"

namespace rune::vm::native {

namespace {

namespace x86 = asmjit::x86;

// General registers: the frame's scalars (the homes), the words (rows,
// strides, ys), the row and the length, all kept by callees; rax and rdx
// are scratch.
const x86::Gp scalars = x86::rbx, words = x86::r12, row = x86::r13, length = x86::r14;

// The carry held in xmm registers across trips: at most this many.
constexpr int pinned_most = 12;

// What a trip reads and writes around the step's instructions, in the
// order of the scan loop's plan (vm/scan.cpp).
struct Trip {
  std::vector<std::int32_t> rows;  // per xs whose row the step reads: its parameter register
  std::vector<std::int32_t> ys;    // per ys: the result register
  std::vector<std::pair<std::int32_t, std::int32_t>> carry;  // per carry: result register, parameter register
};

Trip trip_of(const ScanOp& scan) {
  const Code& step = *scan.step;
  const std::size_t carry = std::size_t(scan.info.carry_count), xs_end = carry + std::size_t(scan.info.xs_count);
  Trip t;
  for (std::size_t k = carry; k < xs_end; ++k)
    if (scan.rows_read[k - carry]) t.rows.push_back(step.params[k].index);
  for (std::size_t k = carry; k < step.results.size(); ++k) t.ys.push_back(step.results[k].index);
  for (std::size_t k = 0; k < carry; ++k) t.carry.push_back({step.results[k].index, step.params[k].index});
  return t;
}

// When each value is read next: the position of an instruction, or the
// trip's end (the instruction count) for the ys and the carry, or never.
struct Reads {
  std::vector<std::array<std::int32_t, 3>> after;  // per instruction and operand read: its register's next read after it
  std::vector<std::int32_t> written;               // per instruction: the first read of the value it writes
  std::vector<std::int32_t> first;                 // per register: its first read in a trip
};

Reads reads_of(const Code& step, const Trip& trip) {
  const std::int32_t end = std::int32_t(step.instructions.size());
  std::vector<std::int32_t> next(step.scalars.size(), never);
  for (std::int32_t r : trip.ys) next[std::size_t(r)] = end;
  for (auto [result, param] : trip.carry) next[std::size_t(result)] = end;
  Reads r;
  r.after.resize(step.instructions.size());
  r.written.resize(step.instructions.size());
  for (std::int32_t i = end; i-- > 0;) {
    const Instruction& in = step.instructions[std::size_t(i)];
    for (Location w : writes(step, in)) {
      r.written[std::size_t(i)] = next[std::size_t(w.index)];
      next[std::size_t(w.index)] = never;
    }
    const Registers read = reads(step, in);
    for (std::size_t k = 0; k < read.size(); ++k) r.after[std::size_t(i)][k] = next[std::size_t(read[k].index)];
    for (Location l : read) next[std::size_t(l.index)] = i;
  }
  r.first = std::move(next);
  return r;
}

}  // namespace

// (It allocates nothing: a scan refused keeps a steady state of calls free
// of allocations.)
const char* scan_refusal(const ScanOp& scan, const Instruction*& culprit) {
  const Code& step = *scan.step;
  if (!step.tensors.empty()) return "its step holds tensors";
  // The registers a trip reads as the scan left them: the constants and the
  // parameters neither carried nor rows (a write to one would be read by the
  // next trip).
  const auto invariant = [&](std::int32_t reg) {
    const auto is_reg = [&](Location l) { return l.index == reg; };
    const std::size_t outside = std::size_t(scan.info.carry_count + scan.info.xs_count);
    return std::ranges::any_of(step.constants, is_reg) ||
           std::any_of(step.params.begin() + std::ptrdiff_t(outside), step.params.end(), is_reg);
  };
  for (const Instruction& in : step.instructions) {
    culprit = &in;
    if (info(in.op).tier == Tier::vm) return "its step runs an instruction that stays on the VM";
    for (Location w : writes(step, in))
      if (invariant(w.index)) return "its step writes the register of a constant";
  }
  culprit = nullptr;
  return nullptr;
}

namespace {

x86::Gp gp(std::uint32_t id, std::size_t size) {
  switch (size) {
    case 1: return x86::gpb_lo(id);
    case 2: return x86::gpw(id);
    case 4: return x86::gpd(id);
    default: return x86::gpq(id);
  }
}

class Emitter {
 public:
  Emitter(x86::Assembler& as, const ScanOp& scan)
      : as_(as), step_(*scan.step), trip_(trip_of(scan)), reads_(reads_of(step_, trip_)), cache_(as, step_) {}

  void loop(bool comments) {
    comments_ = comments;
    const asmjit::Label top = as_.newLabel(), done = as_.newLabel();
    for (const x86::Gp& saved : {x86::rbx, x86::r12, x86::r13, x86::r14}) as_.push(saved);
    as_.sub(x86::rsp, 24);  // two arguments of a call on the stack, 16-byte aligned
    as_.mov(scalars, x86::rdi);
    as_.mov(words, x86::rsi);
    as_.mov(length, x86::rdx);
    as_.test(length, length);
    as_.jle(done);
    pin_carry();
    for (std::size_t k = 0; k < pinned_.size(); ++k) load(pinned_[k].second, pinned_[k].first);
    as_.xor_(row.r32(), row.r32());
    as_.align(asmjit::AlignMode::kCode, 16);
    as_.bind(top);
    start_trip();
    for (std::size_t i = 0; i < step_.instructions.size(); ++i) instruction(std::int32_t(i));
    write_ys();
    move_carry();
    as_.inc(row);
    as_.cmp(row, length);
    as_.jl(top);
    for (auto [xmm, param] : pinned_) store(param, xmm);
    as_.bind(done);
    as_.add(x86::rsp, 24);
    for (const x86::Gp& saved : {x86::r14, x86::r13, x86::r12, x86::rbx}) as_.pop(saved);
    as_.ret();
  }

 private:
  bool is_double(std::int32_t reg) const { return step_.scalar_types[std::size_t(reg)] == nx::DType::float64; }
  std::size_t size_of(std::int32_t reg) const { return nx::size_of(step_.scalar_types[std::size_t(reg)]); }
  x86::Mem home(std::int32_t reg) const { return native::home(step_, reg); }
  x86::Mem word(std::size_t k) const { return x86::qword_ptr(words, std::int32_t(8 * k)); }

  void load(std::int32_t reg, int xmm) {
    if (is_double(reg)) as_.movsd(x86::xmm(std::uint32_t(xmm)), home(reg));
    else as_.movss(x86::xmm(std::uint32_t(xmm)), home(reg));
  }
  void store(std::int32_t reg, int xmm) {
    if (is_double(reg)) as_.movsd(home(reg), x86::xmm(std::uint32_t(xmm)));
    else as_.movss(home(reg), x86::xmm(std::uint32_t(xmm)));
  }
  // Copies an element of reg's width from memory to memory through rax.
  void copy(const x86::Mem& to, const x86::Mem& from, std::size_t size) {
    const x86::Gp via = gp(x86::Gp::kIdAx, size);
    as_.mov(via, from);
    as_.mov(to, via);
  }

  // The float carries read in a trip (or passed on), each in an xmm
  // register of its own at the top of every trip.
  void pin_carry() {
    for (auto [result, param] : trip_.carry) {
      if (int(pinned_.size()) == pinned_most) break;
      if (!is_float(step_.scalar_types[std::size_t(param)]) || reads_.first[std::size_t(param)] == never) continue;
      if (std::ranges::any_of(pinned_, [&](auto p) { return p.second == param; })) continue;
      pinned_.push_back({int(pinned_.size()), param});
    }
  }

  // The state at the top of a trip: the pinned carry in its registers,
  // this row's xs read.
  void start_trip() {
    cache_.clear();
    for (auto [xmm, param] : pinned_) cache_.define(xmm, param, reads_.first[std::size_t(param)]);
    const std::size_t rows = trip_.rows.size();
    for (std::size_t k = 0; k < rows; ++k) {
      const std::int32_t param = trip_.rows[k];
      if (reads_.first[std::size_t(param)] == never) continue;
      as_.mov(x86::rax, row);
      as_.imul(x86::rax, word(rows + k));
      as_.add(x86::rax, word(k));
      if (is_float(step_.scalar_types[std::size_t(param)])) {
        const int xmm = cache_.allocate(0);
        const x86::Mem at = is_double(param) ? x86::qword_ptr(x86::rax) : x86::dword_ptr(x86::rax);
        if (is_double(param)) as_.movsd(x86::xmm(std::uint32_t(xmm)), at);
        else as_.movss(x86::xmm(std::uint32_t(xmm)), at);
        cache_.define(xmm, param, reads_.first[std::size_t(param)]);
      } else {
        const std::size_t size = size_of(param);
        const x86::Gp via = gp(x86::Gp::kIdDx, size);
        as_.mov(via, x86::ptr(x86::rax, 0, std::uint32_t(size)));
        as_.mov(home(param), via);
      }
    }
  }

  void instruction(std::int32_t i) {
    const Instruction& in = step_.instructions[std::size_t(i)];
    if (comments_) as_.comment(("; " + instruction_text(step_, in)).c_str());
    switch (info(in.op).tier) {
      case Tier::emit: return arithmetic(i, in);
      case Tier::call: return call_out(i, in);
      case Tier::vm: break;  // (refused before emitting)
    }
  }

  // dst = a op b (or -a), float32 or float64, in xmm registers: dst takes
  // a's register when a dies here.
  void arithmetic(std::int32_t i, const Instruction& in) {
    const auto& after = reads_.after[std::size_t(i)];
    const bool negation = in.op == Op::neg_f64 || in.op == Op::neg_f32;
    const int xb_cached = negation ? -1 : cache_.find(in.b);
    const int xa = cache_.load(in.a, after[0], bit(xb_cached));
    const int xb = negation ? -1 : cache_.find(in.b);
    const int xd = after[0] == never ? xa : cache_.allocate(bit(xa) | bit(xb));
    const x86::Xmm d = x86::xmm(std::uint32_t(xd));
    if (xd != xa) as_.movaps(d, x86::xmm(std::uint32_t(xa)));
    if (negation) {
      flip_sign(d, in.op == Op::neg_f64);
    } else {
      const x86::Xmm b = x86::xmm(std::uint32_t(xb < 0 ? 0 : xb));
      const x86::Mem bm = home(in.b);
      switch (in.op) {
        case Op::add_f64: xb < 0 ? as_.addsd(d, bm) : as_.addsd(d, b); break;
        case Op::sub_f64: xb < 0 ? as_.subsd(d, bm) : as_.subsd(d, b); break;
        case Op::mul_f64: xb < 0 ? as_.mulsd(d, bm) : as_.mulsd(d, b); break;
        case Op::div_f64: xb < 0 ? as_.divsd(d, bm) : as_.divsd(d, b); break;
        case Op::add_f32: xb < 0 ? as_.addss(d, bm) : as_.addss(d, b); break;
        case Op::sub_f32: xb < 0 ? as_.subss(d, bm) : as_.subss(d, b); break;
        case Op::mul_f32: xb < 0 ? as_.mulss(d, bm) : as_.mulss(d, b); break;
        case Op::div_f32: xb < 0 ? as_.divss(d, bm) : as_.divss(d, b); break;
        default: break;
      }
    }
    if (xd != xa) cache_.read(in.a, after[0]);
    if (!negation && (in.b != in.a || xd != xa)) cache_.read(in.b, after[1]);
    cache_.define(xd, in.dst, reads_.written[std::size_t(i)]);
  }

  void flip_sign(const x86::Xmm& d, bool doubles) {
    const x86::Xmm mask = x86::xmm15;
    if (doubles) {
      as_.mov(x86::rax, asmjit::imm(std::uint64_t(1) << 63));
      as_.movq(mask, x86::rax);
      as_.xorpd(d, mask);
    } else {
      as_.mov(x86::eax, asmjit::imm(std::uint32_t(1) << 31));
      as_.movd(mask, x86::eax);
      as_.xorps(d, mask);
    }
  }

  // The row loop on one element, its operands and result at home.
  void call_out(std::int32_t i, const Instruction& in) {
    const Registers read = reads(step_, in);
    for (Location l : read) cache_.store(l.index);
    for (std::size_t k = 0; k < read.size(); ++k) cache_.read(read[k].index, reads_.after[std::size_t(i)][k]);
    cache_.flush();
    const auto at = [&](std::int32_t reg) { return x86::ptr(scalars, reg * std::int32_t(sizeof(Scalar))); };
    as_.mov(x86::edi, 1);
    as_.lea(x86::rsi, at(in.a));
    as_.xor_(x86::edx, x86::edx);
    const void* target = nullptr;
    switch (in.op) {
      case Op::unary:
      case Op::convert:
        as_.lea(x86::rcx, at(in.dst));
        target = reinterpret_cast<const void*>(in.row.unary);
        break;
      case Op::binary:
        as_.lea(x86::rcx, at(in.b));
        as_.xor_(x86::r8d, x86::r8d);
        as_.lea(x86::r9, at(in.dst));
        target = reinterpret_cast<const void*>(in.row.binary);
        break;
      default:  // select: (1, cond, 0, a, 0, b, 0, out), the last two on the stack
        as_.lea(x86::rcx, at(in.b));
        as_.xor_(x86::r8d, x86::r8d);
        as_.lea(x86::r9, at(in.c));
        as_.mov(x86::qword_ptr(x86::rsp), 0);
        as_.lea(x86::rax, at(in.dst));
        as_.mov(x86::qword_ptr(x86::rsp, 8), x86::rax);
        target = reinterpret_cast<const void*>(in.row.select);
        break;
    }
    as_.mov(x86::rax, asmjit::imm(target));
    as_.call(x86::rax);
  }

  void write_ys() {
    const std::size_t first = 2 * trip_.rows.size();
    for (std::size_t k = 0; k < trip_.ys.size(); ++k) {
      const std::int32_t reg = trip_.ys[k];
      const std::size_t size = size_of(reg);
      as_.mov(x86::rax, word(first + k));
      const std::uint32_t shift = size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0;
      const x86::Mem at = x86::ptr(x86::rax, row, shift, 0, std::uint32_t(size));
      if (const int xmm = cache_.find(reg); xmm >= 0) {
        if (is_double(reg)) as_.movsd(at, x86::xmm(std::uint32_t(xmm)));
        else as_.movss(at, x86::xmm(std::uint32_t(xmm)));
      } else {
        const x86::Gp via = gp(x86::Gp::kIdDx, size);
        as_.mov(via, home(reg));
        as_.mov(at, via);
      }
    }
  }

  // Where a value is at the end of a trip: an xmm register, its home, or
  // the scratch register (xmm15, or rdx for other types) of the carry move.
  struct Place {
    enum Kind : std::uint8_t { xmm, at_home, scratch } kind;
    std::int32_t index;
    bool operator==(const Place&) const = default;
  };
  struct Move {
    Place from, to;
    std::int32_t param;  // (its type)
  };

  // The carry from the results to the parameters, all at once (a result
  // may be another carry's parameter): moves whose target no other move
  // still reads first, a cycle broken through the scratch register.
  void move_carry() {
    std::vector<Move> moves;
    for (auto [result, param] : trip_.carry) {
      const int cached = cache_.find(result);
      const Place from = cached >= 0 ? Place{Place::xmm, cached} : Place{Place::at_home, result};
      Place to{Place::at_home, param};
      for (auto [xmm, pinned] : pinned_)
        if (pinned == param) to = {Place::xmm, xmm};
      if (from != to) moves.push_back({from, to, param});
    }
    while (!moves.empty()) {
      bool moved = false;
      for (std::size_t k = 0; k < moves.size();) {
        const bool read_later = std::ranges::any_of(moves, [&](const Move& m) { return m.from == moves[k].to; });
        if (read_later) {
          ++k;
          continue;
        }
        move(moves[k]);
        moves.erase(moves.begin() + std::ptrdiff_t(k));
        moved = true;
      }
      if (moved) continue;
      const Place cycle = moves.front().from, scratch{Place::scratch, 0};
      move({cycle, scratch, moves.front().param});
      for (Move& m : moves)
        if (m.from == cycle) m.from = scratch;
    }
  }

  void move(const Move& m) {
    const nx::DType type = step_.scalar_types[std::size_t(m.param)];
    const std::size_t size = nx::size_of(type);
    const auto memory = [&](const Place& p) { return home(p.index); };
    if (!is_float(type)) {  // (never cached: at home, or in rdx)
      const x86::Gp rdx = gp(x86::Gp::kIdDx, size);
      if (m.from.kind == Place::scratch) as_.mov(memory(m.to), rdx);
      else if (m.to.kind == Place::scratch) as_.mov(rdx, memory(m.from));
      else copy(memory(m.to), memory(m.from), size);
      return;
    }
    const auto xmm = [](const Place& p) { return p.kind == Place::scratch ? x86::xmm15 : x86::xmm(std::uint32_t(p.index)); };
    const bool from_register = m.from.kind != Place::at_home, to_register = m.to.kind != Place::at_home;
    const bool doubles = type == nx::DType::float64;
    if (from_register && to_register) as_.movaps(xmm(m.to), xmm(m.from));
    else if (to_register) doubles ? as_.movsd(xmm(m.to), memory(m.from)) : as_.movss(xmm(m.to), memory(m.from));
    else if (from_register) doubles ? as_.movsd(memory(m.to), xmm(m.from)) : as_.movss(memory(m.to), xmm(m.from));
    else copy(memory(m.to), memory(m.from), size);
  }

  x86::Assembler& as_;
  const Code& step_;
  Trip trip_;
  Reads reads_;
  XmmCache cache_;
  std::vector<std::pair<int, std::int32_t>> pinned_;  // (xmm register, carry parameter)
  bool comments_ = false;
};

}  // namespace

bool built() { return true; }

ScanLoop emit_scan(const ScanOp& scan, const char*& why, const Instruction*& culprit) {
  if ((why = scan_refusal(scan, culprit))) return nullptr;
  asmjit::CodeHolder code;
  code.init(environment());
  x86::Assembler as(&code);
  Emitter(as, scan).loop(false);
  return reinterpret_cast<ScanLoop>(publish(code, why));
}

void release(ScanLoop loop) { unpublish(reinterpret_cast<void*>(loop)); }

std::string scan_listing(const ScanOp& scan) {
  const Instruction* culprit = nullptr;
  if (scan_refusal(scan, culprit)) return "";
  asmjit::StringLogger logger;
  asmjit::CodeHolder code;
  code.init(environment());
  code.setLogger(&logger);
  x86::Assembler as(&code);
  Emitter(as, scan).loop(true);
  return logger.data();
}

}  // namespace rune::vm::native
