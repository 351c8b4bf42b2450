// The memory of a promoted unit's values: the frames of the codes it runs
// (a scan's step; an iterate's until and step), each frame's scalar
// registers at a base register of the machine. Every scalar register of
// every code is one value, a key, whose home is its frame slot. The
// emitters (x86/, a64/) turn a key's base and offset into an address.
#pragma once

#include <cstdint>
#include <vector>

#include "vm/code.hpp"

namespace rune::vm::native {

bool is_float(nx::DType t);
// The shift of an index to the bytes of elements of `size` (1, 2, 4, 8).
inline std::uint32_t size_shift(std::size_t size) { return size == 8 ? 3 : size == 4 ? 2 : size == 2 ? 1 : 0; }

class Frames {
 public:
  // Adds a code's frame at the machine's general register `base` (its
  // id); returns its space (its keys follow the earlier spaces').
  int add(const Code& code, std::uint32_t base);
  std::int32_t key(int space, std::int32_t reg) const { return spaces_[std::size_t(space)].first + reg; }
  const Code& code(int space) const { return *spaces_[std::size_t(space)].code; }
  std::int32_t size() const { return std::int32_t(types_.size()); }
  nx::DType type(std::int32_t key) const { return types_[std::size_t(key)]; }
  bool is_double(std::int32_t key) const { return type(key) == nx::DType::float64; }
  std::size_t size_of(std::int32_t key) const { return nx::size_of(type(key)); }
  // A packed value: a row of 16 bytes (two float64 or four float32) in one
  // vector register, its home the key's slot and the next (a fused
  // kernel's row, x86/fused_loop.cpp).
  void pack(std::int32_t key) { packed_[std::size_t(key)] = 1; }
  bool packed(std::int32_t key) const { return packed_[std::size_t(key)] != 0; }
  // A value's home: the base register's id and the slot's offset from it.
  std::uint32_t base(std::int32_t key) const { return space(key).base; }
  std::int32_t offset(std::int32_t key) const { return (key - space(key).first) * std::int32_t(sizeof(Scalar)); }
  // The bytes a value's home holds (a packed row's, or its type's).
  std::uint32_t width(std::int32_t key) const { return packed(key) ? 16u : std::uint32_t(size_of(key)); }

 private:
  struct Space {
    const Code* code;
    std::uint32_t base;
    std::int32_t first;
  };
  const Space& space(std::int32_t key) const { return spaces_[space_of_[std::size_t(key)]]; }
  std::vector<Space> spaces_;
  std::vector<nx::DType> types_;
  std::vector<std::uint8_t> space_of_;
  std::vector<std::uint8_t> packed_;
};

}  // namespace rune::vm::native
