#include "vm/native/register_cache.hpp"

namespace rune::vm::native {

RegisterCache::RegisterCache(Homes& homes, const Frames& frames, int count)
    : homes_(homes), count_(count), where_(std::size_t(frames.size()), std::int8_t(-1)) {}

int RegisterCache::allocate(std::uint32_t keep) {
  int chosen = -1;
  for (int x = 0; x < count_; ++x) {
    if (keep & bit(x)) continue;
    if (entries_[std::size_t(x)].key < 0) return x;
    if (chosen < 0 || entries_[std::size_t(x)].next > entries_[std::size_t(chosen)].next) chosen = x;
  }
  evict(chosen);
  return chosen;
}

int RegisterCache::load(std::int32_t key, std::int32_t next, std::uint32_t keep) {
  if (const int x = find(key); x >= 0) return x;
  const int x = allocate(keep);
  homes_.fill(x, key);
  entries_[std::size_t(x)] = {key, next, false};
  where_[std::size_t(key)] = std::int8_t(x);
  return x;
}

void RegisterCache::read(std::int32_t key, std::int32_t next) {
  const int x = find(key);
  if (x < 0) return;
  if (next == never) {
    entries_[std::size_t(x)] = {};
    where_[std::size_t(key)] = -1;
  } else {
    entries_[std::size_t(x)].next = next;
  }
}

void RegisterCache::define(int reg, std::int32_t key, std::int32_t next) {
  if (const int old = find(key); old >= 0 && old != reg) entries_[std::size_t(old)] = {};
  if (const std::int32_t previous = entries_[std::size_t(reg)].key; previous >= 0 && previous != key)
    where_[std::size_t(previous)] = -1;
  if (next == never) {  // (a value nothing reads: its register is free at once)
    entries_[std::size_t(reg)] = {};
    where_[std::size_t(key)] = -1;
    return;
  }
  entries_[std::size_t(reg)] = {key, next, true};
  where_[std::size_t(key)] = std::int8_t(reg);
}

void RegisterCache::store(std::int32_t key) {
  const int x = find(key);
  if (x < 0 || !entries_[std::size_t(x)].changed) return;
  homes_.spill(key, x);
  entries_[std::size_t(x)].changed = false;
}

void RegisterCache::evict(int reg) {
  Entry& e = entries_[std::size_t(reg)];
  if (e.key < 0) return;
  if (e.next != never) store(e.key);
  where_[std::size_t(e.key)] = -1;
  e = {};
}

void RegisterCache::flush() {
  for (int x = 0; x < count_; ++x) evict(x);
}

void RegisterCache::clear() {
  for (Entry& e : entries_)
    if (e.key >= 0) where_[std::size_t(e.key)] = -1, e = {};
}

}  // namespace rune::vm::native
