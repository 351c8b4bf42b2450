// The memory of a promoted unit's values: the frames of the codes it runs
// (a scan's step; an iterate's until and step), each frame's scalar
// registers at a base register of the machine. Every scalar register of
// every code is one value, a key, whose home is its frame slot.
#pragma once

#include <cstdint>
#include <vector>

#include <asmjit/x86.h>

#include "vm/code.hpp"

namespace rune::vm::native {

bool is_float(nx::DType t);

class Frames {
 public:
  // Adds a code's frame at `base`; returns its space (its keys follow the
  // earlier spaces').
  int add(const Code& code, const asmjit::x86::Gp& base);
  std::int32_t key(int space, std::int32_t reg) const { return spaces_[std::size_t(space)].first + reg; }
  const Code& code(int space) const { return *spaces_[std::size_t(space)].code; }
  std::int32_t size() const { return std::int32_t(types_.size()); }
  nx::DType type(std::int32_t key) const { return types_[std::size_t(key)]; }
  bool is_double(std::int32_t key) const { return type(key) == nx::DType::float64; }
  std::size_t size_of(std::int32_t key) const { return nx::size_of(type(key)); }
  // A packed value: a row of 16 bytes (two float64 or four float32) in one
  // xmm register, its home the key's slot and the next (a fused kernel's
  // row, fused_loop.cpp).
  void pack(std::int32_t key) { packed_[std::size_t(key)] = 1; }
  bool packed(std::int32_t key) const { return packed_[std::size_t(key)] != 0; }
  // A value's frame slot, as wide as its type.
  asmjit::x86::Mem home(std::int32_t key) const;
  // Its address (a call-out's argument).
  asmjit::x86::Mem slot(std::int32_t key) const;

 private:
  struct Space {
    const Code* code;
    asmjit::x86::Gp base;
    std::int32_t first;
  };
  std::vector<Space> spaces_;
  std::vector<nx::DType> types_;
  std::vector<std::uint8_t> space_of_;
  std::vector<std::uint8_t> packed_;
};

// Moves a value of `key` (its width: a scalar of its type, or a packed
// row) between an xmm register and memory or another register.
void move_value(asmjit::x86::Assembler& as, const Frames& frames, std::int32_t key, const asmjit::Operand_& to,
                const asmjit::Operand_& from);

}  // namespace rune::vm::native
