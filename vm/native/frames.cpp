#include "vm/native/frames.hpp"

namespace rune::vm::native {

namespace x86 = asmjit::x86;

bool is_float(nx::DType t) { return t == nx::DType::float32 || t == nx::DType::float64; }

int Frames::add(const Code& code, const x86::Gp& base) {
  spaces_.push_back({&code, base, size()});
  types_.insert(types_.end(), code.scalar_types.begin(), code.scalar_types.end());
  space_of_.insert(space_of_.end(), code.scalar_types.size(), std::uint8_t(spaces_.size() - 1));
  return int(spaces_.size()) - 1;
}

x86::Mem Frames::slot(std::int32_t key) const {
  const Space& s = spaces_[space_of_[std::size_t(key)]];
  return x86::ptr(s.base, (key - s.first) * std::int32_t(sizeof(Scalar)));
}

x86::Mem Frames::home(std::int32_t key) const {
  x86::Mem m = slot(key);
  m.setSize(std::uint32_t(size_of(key)));
  return m;
}

}  // namespace rune::vm::native
