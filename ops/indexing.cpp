#include "ops/indexing.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace nx::ops {
namespace {

// The row of `length` that index i names (no_row: none, in drop mode): an
// index in range takes one compare (a negative one is past every row as a
// size_t), the rest go through row_of.
template <IndexMode Mode, class I> std::size_t named_row(I i, std::size_t length) {
  const std::size_t row = std::size_t(i);
  return row < length ? row : row_of<Mode>(i, length);
}


// A row of N elements as one vector of the machine (GCC's vector
// extension: SSE2 on x86-64), for rows of 2 or 4 elements of 16 bytes in
// all: its + - * are the elements' IEEE operations, lane by lane (the
// same bits as a loop over them).
template <class T, std::size_t N>
inline constexpr bool vector_row = (N == 2 || N == 4) && N * sizeof(T) == 16 && std::is_floating_point_v<T>;
template <class T, std::size_t N> using Vector [[gnu::vector_size(N * sizeof(T))]] = T;

template <std::size_t Bytes, IndexMode Mode, class I>
void gather(char* to, const char* operand, const void* indices, std::size_t first, std::size_t count,
            std::size_t length, std::size_t row_bytes) {
  const std::size_t n = Bytes ? Bytes : row_bytes;
  const I* at = static_cast<const I*>(indices) + first;
  for (std::size_t k = 0; k < count; ++k, to += n) {
    const std::size_t row = named_row<Mode>(at[k], length);
    if (Mode == IndexMode::drop && row == no_row)
      std::memset(to, 0, n);
    else
      std::memcpy(to, operand + row * n, n);
  }
}

template <IndexMode Mode, class I> GatherRows by_row_bytes(std::size_t row_bytes) {
  switch (row_bytes) {
    case 1: return &gather<1, Mode, I>;
    case 2: return &gather<2, Mode, I>;
    case 4: return &gather<4, Mode, I>;
    case 8: return &gather<8, Mode, I>;
    case 16: return &gather<16, Mode, I>;
    default: return &gather<0, Mode, I>;
  }
}

template <Prim P, class T> T combined(T x, T y) {  // (T: an element, or a Vector of them)
  if constexpr (P == Prim::add) return x + y;
  else if constexpr (P == Prim::sub) return x - y;
  else return x * y;
}

// out = a P b over a row of n elements (N when N > 0): one machine vector
// when the row is one, else element by element. (out may be a.)
template <Prim P, class T, std::size_t N> void combine_rows(T* out, const T* a, const T* b, std::size_t n) {
  if constexpr (vector_row<T, N>) {
    Vector<T, N> va, vb;
    std::memcpy(&va, a, sizeof va);
    std::memcpy(&vb, b, sizeof vb);
    const Vector<T, N> r = combined<P>(va, vb);
    std::memcpy(out, &r, sizeof r);
  } else {
    for (std::size_t j = 0; j < (N ? N : n); ++j) out[j] = combined<P>(a[j], b[j]);
  }
}

// Rows of N elements when N > 0 (the row of a 2-D or 3-D vector: unrolled),
// of any length for N = 0.
template <class T, std::size_t N = 0> struct InlineAdd {
  static void row(char* to, const char* from, std::size_t n, kernels::BinaryRow) {
    T* out = reinterpret_cast<T*>(to);
    combine_rows<Prim::add, T, N>(out, out, reinterpret_cast<const T*>(from), n);
  }
};
struct LoopAdd {
  static void row(char* to, const char* from, std::size_t n, kernels::BinaryRow add) {
    add(std::int64_t(n), to, 1, from, 1, to);
  }
};

template <IndexMode Mode, class I, class Add>
void scatter(char* out, const char* updates, const void* indices, std::size_t first, std::size_t count,
             std::size_t length, std::size_t row, std::size_t row_bytes, kernels::BinaryRow add) {
  const I* at = static_cast<const I*>(indices) + first;
  for (std::size_t k = 0; k < count; ++k, updates += row_bytes) {
    const std::size_t target = named_row<Mode>(at[k], length);
    if (Mode == IndexMode::drop && target == no_row) continue;
    Add::row(out + target * row_bytes, updates, row, add);
  }
}

template <IndexMode Mode, class I, class T> ScatterRows by_row(std::size_t row) {
  switch (row) {
    case 1: return &scatter<Mode, I, InlineAdd<T, 1>>;
    case 2: return &scatter<Mode, I, InlineAdd<T, 2>>;
    case 3: return &scatter<Mode, I, InlineAdd<T, 3>>;
    case 4: return &scatter<Mode, I, InlineAdd<T, 4>>;
    default: return &scatter<Mode, I, InlineAdd<T>>;
  }
}

template <IndexMode Mode, class I> ScatterRows by_value(DType value, std::size_t row) {
  switch (value) {
    case DType::float64: return by_row<Mode, I, double>(row);
    case DType::float32: return by_row<Mode, I, float>(row);
    default: return &scatter<Mode, I, LoopAdd>;
  }
}

template <Prim P, class T, IndexMode Mode, class I, std::size_t N>
void paired(char* to, const char* a, const void* indices_a, std::size_t length_a, const char* b, const void* indices_b,
            std::size_t length_b, std::size_t first, std::size_t count, std::size_t row) {
  const std::size_t n = N ? N : row;
  const I* ia = static_cast<const I*>(indices_a) + first;
  const I* ib = static_cast<const I*>(indices_b) + first;
  const T* xa = reinterpret_cast<const T*>(a);
  const T* xb = reinterpret_cast<const T*>(b);
  T* out = reinterpret_cast<T*>(to);
  for (std::size_t k = 0; k < count; ++k, out += n) {
    const std::size_t ra = named_row<Mode>(ia[k], length_a), rb = named_row<Mode>(ib[k], length_b);
    if (Mode == IndexMode::drop && (ra == no_row || rb == no_row)) [[unlikely]] {
      for (std::size_t j = 0; j < n; ++j)
        out[j] = combined<P>(ra == no_row ? T(0) : xa[ra * n + j], rb == no_row ? T(0) : xb[rb * n + j]);
      continue;
    }
    const T* ya = xa + ra * n;
    const T* yb = xb + rb * n;
    combine_rows<P, T, N>(out, ya, yb, n);
  }
}

template <Prim P, class T, IndexMode Mode, class I> PairedRows paired_by_row(std::size_t row) {
  if (row == 4 && vector_row<T, 4>) return &paired<P, T, Mode, I, 4>;
  return row == 2 ? &paired<P, T, Mode, I, 2> : &paired<P, T, Mode, I, 0>;
}

template <Prim P, class T> PairedRows paired_by_index(DType index, IndexMode mode, std::size_t row) {
  const bool drop = mode == IndexMode::drop;
  switch (index) {
    case DType::int32:
      return drop ? paired_by_row<P, T, IndexMode::drop, std::int32_t>(row)
                  : paired_by_row<P, T, IndexMode::clamp, std::int32_t>(row);
    case DType::int64:
      return drop ? paired_by_row<P, T, IndexMode::drop, std::int64_t>(row)
                  : paired_by_row<P, T, IndexMode::clamp, std::int64_t>(row);
    default: return nullptr;
  }
}

template <class T> PairedRows paired_by_prim(Prim prim, DType index, IndexMode mode, std::size_t row) {
  switch (prim) {
    case Prim::add: return paired_by_index<Prim::add, T>(index, mode, row);
    case Prim::sub: return paired_by_index<Prim::sub, T>(index, mode, row);
    case Prim::mul: return paired_by_index<Prim::mul, T>(index, mode, row);
    default: return nullptr;
  }
}

}  // namespace

PairedRows paired_rows(Prim prim, DType value, DType index, IndexMode mode, std::size_t row) {
  switch (value) {
    case DType::float64: return paired_by_prim<double>(prim, index, mode, row);
    case DType::float32: return paired_by_prim<float>(prim, index, mode, row);
    default: return nullptr;
  }
}

void throw_not_an_index(DType dtype) {
  throw std::logic_error("nx: an index of dtype " + std::string(name(dtype)) + ", which the type rules refuse");
}

GatherRows gather_rows(DType index, IndexMode mode, std::size_t row_bytes) {
  GatherRows loop = nullptr;
  with_index_type(index, [&](auto type) {
    using I = decltype(type);
    loop = mode == IndexMode::drop ? by_row_bytes<IndexMode::drop, I>(row_bytes)
                                   : by_row_bytes<IndexMode::clamp, I>(row_bytes);
  });
  return loop;
}

ScatterRows scatter_rows(DType index, IndexMode mode, DType value, std::size_t row) {
  ScatterRows loop = nullptr;
  with_index_type(index, [&](auto type) {
    using I = decltype(type);
    loop = mode == IndexMode::drop ? by_value<IndexMode::drop, I>(value, row)
                                   : by_value<IndexMode::clamp, I>(value, row);
  });
  return loop;
}

}  // namespace nx::ops
