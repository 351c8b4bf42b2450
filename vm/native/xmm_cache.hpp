// The float32 and float64 values of a step held in xmm registers while one
// trip of its loop is emitted. Every scalar register has a home, its slot in
// the frame (rbx points at the frame's scalars); a value is either cached in
// an xmm register (changed since it was last written home, or not) or at
// home. Straight-line code and the next read of every value known, so a
// full cache evicts the value read furthest ahead (Belady's choice), and a
// value written home is one still read later.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <asmjit/x86.h>

#include "vm/code.hpp"

namespace rune::vm::native {

// The position of a read no later instruction makes: the value is dead.
inline constexpr std::int32_t never = std::numeric_limits<std::int32_t>::max();

// A value's home (its frame slot) and its width.
asmjit::x86::Mem home(const Code& code, std::int32_t reg);
bool is_float(nx::DType t);

class XmmCache {
 public:
  // xmm0 .. xmm14 hold values; xmm15 is the emitter's scratch.
  static constexpr int count = 15;
  struct Entry {
    std::int32_t reg = -1;      // the scalar register whose value it holds; -1: free
    std::int32_t next = never;  // the position of its next read
    bool changed = false;       // its home is stale
  };

  XmmCache(asmjit::x86::Assembler& as, const Code& code);

  // The xmm register caching reg's value, or -1.
  int find(std::int32_t reg) const { return where_[std::size_t(reg)]; }
  const Entry& entry(int xmm) const { return entries_[std::size_t(xmm)]; }
  // reg's value in an xmm register, loaded from its home when not cached,
  // evicting none of the registers in `keep` (a mask).
  int load(std::int32_t reg, std::int32_t next, std::uint32_t keep);
  // A free xmm register, evicting the value read furthest ahead (written
  // home first when still read) but none of those in `keep`.
  int allocate(std::uint32_t keep);
  // The cached value of reg was read; its next read is at `next` (never:
  // its register is freed).
  void read(std::int32_t reg, std::int32_t next);
  // reg's new value is in xmm (its home stale), read next at `next`. A
  // value of reg cached elsewhere is forgotten.
  void define(int xmm, std::int32_t reg, std::int32_t next);
  // Writes reg's value home when it is cached and changed.
  void store(std::int32_t reg);
  // Before a call (every xmm register is the callee's): values still read
  // later written home, and nothing cached.
  void flush();
  // Nothing cached (no code: a new trip's state is set up after).
  void clear();

 private:
  void evict(int xmm);
  asmjit::x86::Assembler& as_;
  const Code& code_;
  std::array<Entry, count> entries_{};
  std::vector<std::int8_t> where_;  // per scalar register: its xmm register or -1
};

inline std::uint32_t bit(int xmm) { return xmm < 0 ? 0u : 1u << xmm; }

}  // namespace rune::vm::native
