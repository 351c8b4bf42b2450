#include "vm/native/trip.hpp"

#include <algorithm>

#include "vm/listing.hpp"
#include "vm/operands.hpp"

namespace rune::vm::native {

const char* code_refusal(const Code& code, std::span<const Location> invariant, const Instruction*& culprit) {
  culprit = nullptr;
  if (!code.tensors.empty()) return "its step holds tensors";
  const auto is_invariant = [&](std::int32_t reg) {
    const auto is_reg = [&](Location l) { return l.index == reg; };
    return std::ranges::any_of(code.constants, is_reg) || std::ranges::any_of(invariant, is_reg);
  };
  for (const Instruction& in : code.instructions) {
    culprit = &in;
    if (info(in.op).tier == Tier::vm) return "its step runs an instruction that stays on the VM";
    for (Location w : writes(code, in))
      if (is_invariant(w.index)) return "its step writes the register of a constant";
  }
  culprit = nullptr;
  return nullptr;
}

void add_instructions(const Frames& frames, int space, std::vector<Event>& events) {
  const Code& code = frames.code(space);
  for (const Instruction& in : code.instructions) {
    Event e{&in, space, {}, {}};
    for (Location l : reads(code, in)) e.reads.push_back(frames.key(space, l.index));
    for (Location l : writes(code, in)) e.writes.push_back(frames.key(space, l.index));
    events.push_back(std::move(e));
  }
}

std::string event_text(const Frames& frames, const Event& event) {
  const Instruction& in = *event.in;
  const std::int32_t a = frames.key(event.space, in.a), dst = frames.key(event.space, in.dst);
  if (in.op != Op::convert || frames.packed(a) == frames.packed(dst))
    return instruction_text(frames.code(event.space), in);
  std::string out = frames.packed(dst) ? "spread     s" : "lane       s";
  out.append(std::to_string(in.dst)).append(" = s").append(std::to_string(in.a));
  if (frames.packed(dst)) return out.append(" along the row");
  return out.append("[").append(std::to_string(in.aux)).append("]");
}

bool is_comparison(nx::ops::Prim p) {
  using nx::ops::Prim;
  return p == Prim::less || p == Prim::less_equal || p == Prim::greater || p == Prim::greater_equal ||
         p == Prim::equal || p == Prim::not_equal;
}

bool is_word(nx::DType t) {
  return t == nx::DType::int32 || t == nx::DType::int64 || t == nx::DType::uint32 || t == nx::DType::uint64;
}

// A backward pass gives every read the position of the next read of its
// value, and every write its value's first read (an event reads before it
// writes).
Trip::Trip(const Frames& frames, std::vector<Event> events, int registers, int pinned_most, bool comments)
    : frames_(frames), events_(std::move(events)), cache_(*this, frames, registers), pinned_most_(pinned_most),
      comments_(comments) {
  std::vector<std::int32_t> next(std::size_t(frames.size()), never);
  after_.resize(events_.size());
  written_.resize(events_.size());
  for (std::size_t e = events_.size(); e-- > 0;) {
    const Event& ev = events_[e];
    for (std::int32_t w : ev.writes) {
      written_[e].push_back(next[std::size_t(w)]);
      next[std::size_t(w)] = never;
    }
    for (std::int32_t r : ev.reads) after_[e].push_back(next[std::size_t(r)]);
    for (std::int32_t r : ev.reads) next[std::size_t(r)] = std::int32_t(e);
  }
  first_ = std::move(next);
}

void Trip::instruction(std::size_t e) {
  const Instruction& in = *events_[e].in;
  if (comments_) comment("; " + event_text(frames_, events_[e]));
  switch (info(in.op).tier) {
    case Tier::emit: return arithmetic(e, in);
    case Tier::call:
      if (!inline_call(e, in)) call_out(e, in);
      return;
    case Tier::vm: break;  // (refused before emitting)
  }
}

// The callee owns every vector register, so the values read later go home
// first (and the call's operands, which it reads at home).
void Trip::calling_out(std::size_t e) {
  called_out_ = true;
  const Event& ev = events_[e];
  for (std::int32_t r : ev.reads) cache_.store(r);
  for (std::size_t k = 0; k < ev.reads.size(); ++k) cache_.read(ev.reads[k], after(e, k));
  cache_.flush();
}

Trip::Pinned Trip::pin(const std::vector<std::int32_t>& params) const {
  Pinned pinned;
  for (std::int32_t key : params)
    if (int(pinned.size()) < pinned_most_ && is_float(frames_.type(key)) && first(key) != never)
      pinned.push_back({int(pinned.size()), key});
  return pinned;
}

void Trip::load(const Pinned& pinned) {
  for (auto [reg, key] : pinned) fill(reg, key);
}

void Trip::store(const Pinned& pinned) {
  for (auto [reg, key] : pinned) spill(key, reg);
}

void Trip::start(const Pinned& pinned) {
  cache_.clear();
  for (auto [reg, key] : pinned) cache_.define(reg, key, first(key));
}

void Trip::move_carry(const std::vector<std::pair<std::int32_t, std::int32_t>>& carry, const Pinned& pinned) {
  std::vector<Move> moves;
  for (auto [result, param] : carry) {
    Place to{Place::home, param};
    for (auto [reg, key] : pinned)
      if (key == param) to = {Place::vector, reg};
    moves.push_back({place(result), to, param});
  }
  move_all(std::move(moves));
}

void Trip::pass(std::int32_t from, std::int32_t to, std::int32_t next) {
  if (next == never) {
    cache_.read(from, never);
  } else if (!is_float(frames_.type(to))) {
    copy_home(to, from);
  } else if (const int reg = cache_.find(from); reg >= 0) {
    cache_.define(reg, to, next);
  } else {
    const int fresh = cache_.allocate(0);
    fill(fresh, from);
    cache_.define(fresh, to, next);
  }
}

void Trip::store_cached(const std::vector<std::int32_t>& keys) {
  for (std::int32_t key : keys)
    if (const int reg = cache_.find(key); reg >= 0) spill(key, reg);
}

Place Trip::place(std::int32_t key) const {
  const int x = cache_.find(key);
  return x >= 0 ? Place{Place::vector, x} : Place{Place::home, key};
}

// Moves whose target no other move still reads go first; a cycle is broken
// through the scratch register.
void Trip::move_all(std::vector<Move> moves) {
  std::erase_if(moves, [](const Move& m) { return m.from == m.to; });
  while (!moves.empty()) {
    bool moved = false;
    for (std::size_t k = 0; k < moves.size();) {
      if (std::ranges::any_of(moves, [&](const Move& m) { return m.from == moves[k].to; })) {
        ++k;
        continue;
      }
      move(moves[k]);
      moves.erase(moves.begin() + std::ptrdiff_t(k));
      moved = true;
    }
    if (moved) continue;
    const Place cycle = moves.front().from, scratch{Place::scratch, 0};
    move({cycle, scratch, moves.front().key});
    for (Move& m : moves)
      if (m.from == cycle) m.from = scratch;
  }
}

}  // namespace rune::vm::native
