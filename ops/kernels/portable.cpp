// The portable kernel table: scalar loops for every primitive and dtype an
// operation accepts. The SIMD tables then replace the float32/float64 loops.
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <string_view>
#include <utility>

#include "ops/kernels/loops.hpp"

namespace nx::ops::kernels {
namespace {

template <std::size_t Bytes> struct Element { unsigned char bytes[Bytes]; };

// Elements of 1, 2, 4 or 8 bytes (as signed integers S) chosen by a mask
// made of the condition's byte (any byte but 0 chooses a, as a borrowed
// buffer may hold), without strides where the operands are in a row or
// one element: loops the compiler vectorizes.
template <class S>
void select_words(std::int64_t n, const unsigned char* c, std::int64_t sc, const S* a, std::int64_t sa, const S* b,
                  std::int64_t sb, S* out) {
  auto chosen = [](unsigned char which, S x, S y) {
    const S mask = S(-S(which != 0));
    return S((x & mask) | (y & S(~mask)));
  };
  if (sc == 1 && sa == 1 && sb == 1) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = chosen(c[i], a[i], b[i]);
  } else if (sc == 1 && sa == 0 && sb == 1) {
    const S x = *a;
    for (std::int64_t i = 0; i < n; ++i) out[i] = chosen(c[i], x, b[i]);
  } else if (sc == 1 && sa == 1 && sb == 0) {
    const S y = *b;
    for (std::int64_t i = 0; i < n; ++i) out[i] = chosen(c[i], a[i], y);
  } else {
    for (std::int64_t i = 0; i < n; ++i) out[i] = chosen(c[i * sc], a[i * sa], b[i * sb]);
  }
}

template <std::size_t Bytes>
void select_loop(std::int64_t n, const void* c_, std::int64_t sc, const void* a_, std::int64_t sa,
                 const void* b_, std::int64_t sb, void* out_) {
  if constexpr (Bytes == 1 || Bytes == 2 || Bytes == 4 || Bytes == 8) {
    using S = std::conditional_t<Bytes == 1, std::int8_t,
                                 std::conditional_t<Bytes == 2, std::int16_t,
                                                    std::conditional_t<Bytes == 4, std::int32_t, std::int64_t>>>;
    select_words(n, static_cast<const unsigned char*>(c_), sc, static_cast<const S*>(a_), sa,
                 static_cast<const S*>(b_), sb, static_cast<S*>(out_));
  } else {
    using E = Element<Bytes>;
    const bool* c = static_cast<const bool*>(c_);
    const E* a = static_cast<const E*>(a_);
    const E* b = static_cast<const E*>(b_);
    E* out = static_cast<E*>(out_);
    for (std::int64_t i = 0; i < n; ++i) out[i] = c[i * sc] ? a[i * sa] : b[i * sb];
  }
}

template <class From, class To> void convert_loop(std::int64_t n, const void* a_, std::int64_t sa, void* out_) {
  const From* a = static_cast<const From*>(a_);
  To* out = static_cast<To*>(out_);
  for (std::int64_t i = 0; i < n; ++i) out[i] = convert_value<To>(a[i * sa]);
}

template <Prim P, DType D> void fill_one(Table& t) {
  using T = element_t<D>;
  constexpr PrimInfo I = info(P);
  if constexpr ((I.accepts & class_bit<T>()) != 0) {
    if constexpr (I.family == Family::unary) {
      t.unary[int(P)][int(D)] = &unary_loop<P, T>;
    } else if constexpr (I.family == Family::binary) {
      t.binary[int(P)][int(D)] = &binary_loop<P, T>;
    } else if constexpr (I.family == Family::reduce) {
      using Pieces = ScalarReduce<P, T>;
      t.reduce[int(P)][int(D)] = &reduce_whole<Pieces>;
      t.reduce_pieces[int(P)][int(D)] = {&Pieces::start, &Pieces::add, &Pieces::finish, &Pieces::partial};
      if constexpr (std::is_floating_point_v<T> && !is_logical_reduce<P>) {
        t.short_rows[int(P)][int(D)] = &short_rows<P, T>;
        t.short_row_elements[int(D)] = reduce_lanes<T>;
      }
    } else if constexpr (I.family == Family::arg) {
      t.arg[int(P)][int(D)] = &arg_loop<P, T>;
    }
  }
}

template <DType From, std::size_t... To> void fill_converts(Table& t, std::index_sequence<To...>) {
  ((t.convert[int(From)][To] = &convert_loop<element_t<From>, element_t<DType(To)>>), ...);
}

template <DType D, std::size_t... P> void fill_dtype(Table& t, std::index_sequence<P...>) {
  (fill_one<Prim(P), D>(t), ...);
  t.select[int(D)] = &select_loop<sizeof(element_t<D>)>;
  fill_converts<D>(t, std::make_index_sequence<dtype_count>{});
}

template <std::size_t... D> void fill_all(Table& t, std::index_sequence<D...>) {
  (fill_dtype<DType(D)>(t, std::make_index_sequence<prim_count>{}), ...);
}

}  // namespace

void fill_portable(Table& t) { fill_all(t, std::make_index_sequence<dtype_count>{}); }

// The best instruction set the processor has, or the one RUNE_SIMD names
// (portable, sse2, avx2, avx512; portable or neon on ARM) when the processor
// has it: tests run every level on one machine that way.
const Table& table() {
  static const Table instance = [] {
    Table t;
    fill_portable(t);
#if defined(__x86_64__)
    const auto has = xsimd::available_architectures();
    const char* env = std::getenv("RUNE_SIMD");
    const std::string_view wanted = env ? env : "";
    if (wanted == "portable") return t;
    if (wanted == "sse2") fill_sse2(t);
    else if (has.avx512f && (wanted.empty() || wanted == "avx512")) fill_avx512(t);
    else if (has.avx2 && has.fma3_avx2 && (wanted.empty() || wanted == "avx2" || wanted == "avx512")) fill_avx2(t);
    else fill_sse2(t);
#elif defined(__aarch64__)
    const char* env = std::getenv("RUNE_SIMD");
    if (!env || std::string_view(env) != "portable") fill_neon(t);
#endif
    return t;
  }();
  return instance;
}

}  // namespace nx::ops::kernels
