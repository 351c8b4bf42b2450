#include "vm/native/xmm_cache.hpp"

namespace rune::vm::native {

namespace x86 = asmjit::x86;

void move_scalar(x86::Assembler& as, const asmjit::Operand_& to, const asmjit::Operand_& from, bool doubles) {
  as.emit(doubles ? x86::Inst::kIdMovsd : x86::Inst::kIdMovss, to, from);
}

XmmCache::XmmCache(x86::Assembler& as, const Frames& frames)
    : as_(as), frames_(frames), where_(std::size_t(frames.size()), std::int8_t(-1)) {}

int XmmCache::allocate(std::uint32_t keep) {
  int chosen = -1;
  for (int x = 0; x < count; ++x) {
    if (keep & bit(x)) continue;
    if (entries_[std::size_t(x)].reg < 0) return x;
    if (chosen < 0 || entries_[std::size_t(x)].next > entries_[std::size_t(chosen)].next) chosen = x;
  }
  evict(chosen);
  return chosen;
}

int XmmCache::load(std::int32_t reg, std::int32_t next, std::uint32_t keep) {
  if (const int x = find(reg); x >= 0) return x;
  const int x = allocate(keep);
  move_value(as_, frames_, reg, x86::xmm(std::uint32_t(x)), frames_.home(reg));
  entries_[std::size_t(x)] = {reg, next, false};
  where_[std::size_t(reg)] = std::int8_t(x);
  return x;
}

void XmmCache::read(std::int32_t reg, std::int32_t next) {
  const int x = find(reg);
  if (x < 0) return;
  if (next == never) {
    entries_[std::size_t(x)] = {};
    where_[std::size_t(reg)] = -1;
  } else {
    entries_[std::size_t(x)].next = next;
  }
}

void XmmCache::define(int xmm, std::int32_t reg, std::int32_t next) {
  if (const int old = find(reg); old >= 0 && old != xmm) entries_[std::size_t(old)] = {};
  if (const std::int32_t previous = entries_[std::size_t(xmm)].reg; previous >= 0 && previous != reg)
    where_[std::size_t(previous)] = -1;
  if (next == never) {  // (a value nothing reads: its register is free at once)
    entries_[std::size_t(xmm)] = {};
    where_[std::size_t(reg)] = -1;
    return;
  }
  entries_[std::size_t(xmm)] = {reg, next, true};
  where_[std::size_t(reg)] = std::int8_t(xmm);
}

void XmmCache::store(std::int32_t reg) {
  const int x = find(reg);
  if (x < 0 || !entries_[std::size_t(x)].changed) return;
  move_value(as_, frames_, reg, frames_.home(reg), x86::xmm(std::uint32_t(x)));
  entries_[std::size_t(x)].changed = false;
}

void XmmCache::evict(int xmm) {
  Entry& e = entries_[std::size_t(xmm)];
  if (e.reg < 0) return;
  if (e.next != never) store(e.reg);
  where_[std::size_t(e.reg)] = -1;
  e = {};
}

void XmmCache::flush() {
  for (int x = 0; x < count; ++x) evict(x);
}

void XmmCache::clear() {
  for (Entry& e : entries_)
    if (e.reg >= 0) where_[std::size_t(e.reg)] = -1, e = {};
}

}  // namespace rune::vm::native
