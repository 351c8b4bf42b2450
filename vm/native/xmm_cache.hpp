// The float32 and float64 values of a unit held in xmm registers while one
// trip of its loop is emitted. Every value has a home, its frame slot
// (frames.hpp); it is either cached in an xmm register (changed since it
// was last written home, or not) or at home. Straight-line code and the next read of every value known, so a
// full cache evicts the value read furthest ahead (Belady's choice), and a
// value written home is one still read later.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <asmjit/x86.h>

#include "vm/native/frames.hpp"

namespace rune::vm::native {

// The position of a read no later instruction makes: the value is dead.
inline constexpr std::int32_t never = std::numeric_limits<std::int32_t>::max();

class XmmCache {
 public:
  // xmm0 .. xmm14 hold values; xmm15 is the emitter's scratch.
  static constexpr int count = 15;
  struct Entry {
    std::int32_t reg = -1;      // the value (its key) it holds; -1: free
    std::int32_t next = never;  // the position of its next read
    bool changed = false;       // its home is stale
  };

  XmmCache(asmjit::x86::Assembler& as, const Frames& frames);

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
  const Frames& frames_;
  std::array<Entry, count> entries_{};
  std::vector<std::int8_t> where_;  // per value: its xmm register or -1
};

// movsd (doubles) or movss between an xmm register and memory or another
// register.
void move_scalar(asmjit::x86::Assembler& as, const asmjit::Operand_& to, const asmjit::Operand_& from, bool doubles);

inline std::uint32_t bit(int xmm) { return xmm < 0 ? 0u : 1u << xmm; }

}  // namespace rune::vm::native
