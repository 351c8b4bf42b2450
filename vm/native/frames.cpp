#include "vm/native/frames.hpp"

#include "vm/native/xmm_cache.hpp"

namespace rune::vm::native {

namespace x86 = asmjit::x86;

bool is_float(nx::DType t) { return t == nx::DType::float32 || t == nx::DType::float64; }

int Frames::add(const Code& code, const x86::Gp& base) {
  spaces_.push_back({&code, base, size()});
  types_.insert(types_.end(), code.scalar_types.begin(), code.scalar_types.end());
  space_of_.insert(space_of_.end(), code.scalar_types.size(), std::uint8_t(spaces_.size() - 1));
  packed_.insert(packed_.end(), code.scalar_types.size(), 0);
  return int(spaces_.size()) - 1;
}

x86::Mem Frames::slot(std::int32_t key) const {
  const Space& s = spaces_[space_of_[std::size_t(key)]];
  return x86::ptr(s.base, (key - s.first) * std::int32_t(sizeof(Scalar)));
}

x86::Mem Frames::home(std::int32_t key) const {
  x86::Mem m = slot(key);
  m.setSize(packed(key) ? 16u : std::uint32_t(size_of(key)));
  return m;
}

void move_value(x86::Assembler& as, const Frames& frames, std::int32_t key, const asmjit::Operand_& to,
                const asmjit::Operand_& from) {
  const bool doubles = frames.is_double(key);
  if (frames.packed(key)) as.emit(doubles ? x86::Inst::kIdMovupd : x86::Inst::kIdMovups, to, from);
  else move_scalar(as, to, from, doubles);
}

}  // namespace rune::vm::native
