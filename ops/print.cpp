// Printing: "float64 [2, 2] [[1, 2], [3, 4]]".
//
// Floats print in the shortest text that reads back to the same value
// (std::to_chars), so integral values have no decimal point; NaN prints as
// nan, infinities as inf and -inf; complex values as 1+2j. A tensor of more
// than 1000 elements shows, along each axis longer than 6, its first three
// and last three entries around "...". An empty axis counts as one entry
// there, so a tensor of a hundred million empty rows prints short too.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

#include "ops/concrete.hpp"
#include "ops/kernels/loops.hpp"
#include "rune/nx.hpp"

namespace nx {
namespace {

constexpr std::int64_t elide_above = 1000, edge = 3;

template <class F> std::string shortest(F x) {
  if (std::isnan(x)) return "nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// The shortest text that reads back to the same 16-bit float.
template <class H> std::string shortest_half(H h) {
  float x = float(h);
  if (std::isnan(x) || std::isinf(x) || x == 0) return shortest(x);
  char buf[64];
  for (int precision = 1; precision < 10; ++precision) {
    auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, precision);
    float back = 0;
    std::from_chars(buf, r.ptr, back);
    if (H(back).bits == h.bits) return shortest(back);
  }
  return shortest(x);
}

template <class T> std::string element_text(const T& x) {
  if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
  else if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) return shortest_half(x);
  else if constexpr (std::is_floating_point_v<T>) return shortest(x);
  else if constexpr (ops::kernels::is_cplx<T>) {
    std::string im = shortest(x.imag());
    return shortest(x.real()) + (im[0] == '-' ? "" : "+") + im + "j";
  } else return std::to_string(x);
}

template <class T> struct Printer {
  const detail::TensorImpl& t;
  bool elide;
  std::string out;

  void axis(std::size_t d, const T* at) {
    if (d == t.shape.size()) {
      out += element_text(*at);
      return;
    }
    const std::int64_t n = t.shape[d];
    out += '[';
    for (std::int64_t i = 0; i < n; ++i) {
      if (elide && n > 2 * edge && i == edge) {
        out += "..., ";
        i = n - edge;
      }
      axis(d + 1, at + i * t.strides[d]);
      if (i + 1 < n) out += ", ";
    }
    out += ']';
  }
};

// Whether the text elides: more than elide_above entries, an empty axis
// counting as one (the brackets of its rows are printed).
bool elides(const Shape& shape) {
  std::int64_t entries = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(entries, std::max<std::int64_t>(d, 1), &entries)) return true;
  return entries > elide_above;
}

}  // namespace

std::string to_string(const Tensor& t) {
  Tensor v = ops::elements_of(t, "nx::to_string");
  std::string head = ops::describe(v) + " ";
  return visit_dtype(v.dtype(), [&](auto d) {
    using T = element_t<decltype(d)::value>;
    Printer<T> p{*v.impl(), elides(v.shape()), head};
    p.axis(0, ops::data_of<T>(v));
    return p.out;
  });
}

void print(const Tensor& t) { std::cout << to_string(t) << '\n'; }

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace nx
