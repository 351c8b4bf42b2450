// The float32 and float64 values of a unit held in the machine's vector
// registers (x86-64's xmm, AArch64's v) while one trip of its loop is
// emitted. Every value has a home, its frame slot (frames.hpp); it is
// either cached in a register (changed since it was last written home, or
// not) or at home. Straight-line code and the next read of every value
// known, so a full cache evicts the value read furthest ahead (Belady's
// choice), and a value written home is one still read later. The cache
// decides; its `Homes` (the emitter) writes the loads and stores.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "vm/native/frames.hpp"

namespace rune::vm::native {

// The position of a read no later instruction makes: the value is dead.
inline constexpr std::int32_t never = std::numeric_limits<std::int32_t>::max();

class RegisterCache {
 public:
  // The code that moves a value (its key) between a register and its home.
  class Homes {
   public:
    virtual void fill(int reg, std::int32_t key) = 0;
    virtual void spill(std::int32_t key, int reg) = 0;

   protected:
    ~Homes() = default;
  };
  static constexpr int most = 32;
  struct Entry {
    std::int32_t key = -1;      // the value it holds; -1: free
    std::int32_t next = never;  // the position of its next read
    bool changed = false;       // its home is stale
  };

  // Registers 0 .. count - 1 hold values (the emitter keeps one more as
  // its scratch).
  RegisterCache(Homes& homes, const Frames& frames, int count);

  // The register caching key's value, or -1.
  int find(std::int32_t key) const { return where_[std::size_t(key)]; }
  const Entry& entry(int reg) const { return entries_[std::size_t(reg)]; }
  // key's value in a register, loaded from its home when not cached,
  // evicting none of the registers in `keep` (a mask).
  int load(std::int32_t key, std::int32_t next, std::uint32_t keep);
  // A free register, evicting the value read furthest ahead (written home
  // first when still read) but none of those in `keep`.
  int allocate(std::uint32_t keep);
  // The cached value of key was read; its next read is at `next` (never:
  // its register is freed).
  void read(std::int32_t key, std::int32_t next);
  // key's new value is in `reg` (its home stale), read next at `next`. A
  // value of key cached elsewhere is forgotten.
  void define(int reg, std::int32_t key, std::int32_t next);
  // Writes key's value home when it is cached and changed.
  void store(std::int32_t key);
  // Before a call (the callee may change every register): values still
  // read later written home, and nothing cached.
  void flush();
  // Nothing cached (no code: a new trip's state is set up after).
  void clear();

 private:
  void evict(int reg);
  Homes& homes_;
  int count_;
  std::array<Entry, most> entries_{};
  std::vector<std::int8_t> where_;  // per value: its register or -1
};

inline std::uint32_t bit(int reg) { return reg < 0 ? 0u : 1u << reg; }

}  // namespace rune::vm::native
