#include "ops/broadcast.hpp"

namespace nx::ops {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  std::size_t shift = longer.size() - shorter.size();
  for (std::size_t i = 0; i < shorter.size(); ++i) {
    std::int64_t x = longer[shift + i], y = shorter[i];
    if (x == y || y == 1) continue;
    if (x != 1) return std::nullopt;
    out[shift + i] = y;
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  std::size_t shift = to.size() - from.size();
  for (std::size_t i = 0; i < from.size(); ++i)
    if (from[i] != to[shift + i] && from[i] != 1) return false;
  return true;
}

detail::Strides broadcast_strides(const detail::TensorImpl& t, const Shape& to) {
  detail::Strides s(to.size(), 0);
  std::size_t shift = to.size() - t.shape.size();
  for (std::size_t i = 0; i < t.shape.size(); ++i)
    s[shift + i] = t.shape[i] == to[shift + i] ? t.strides[i] : 0;
  return s;
}

}  // namespace nx::ops
