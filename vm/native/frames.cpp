#include "vm/native/frames.hpp"

namespace rune::vm::native {

bool is_float(nx::DType t) { return t == nx::DType::float32 || t == nx::DType::float64; }

int Frames::add(const Code& code, std::uint32_t base) {
  spaces_.push_back({&code, base, size()});
  types_.insert(types_.end(), code.scalar_types.begin(), code.scalar_types.end());
  space_of_.insert(space_of_.end(), code.scalar_types.size(), std::uint8_t(spaces_.size() - 1));
  packed_.insert(packed_.end(), code.scalar_types.size(), 0);
  return int(spaces_.size()) - 1;
}

}  // namespace rune::vm::native
