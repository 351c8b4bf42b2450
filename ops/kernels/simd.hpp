// SIMD row loops for float32 and float64, for one instruction set (Arch).
// Included by one translation unit per instruction set, each compiled with
// its flags (simd_sse2.cpp, simd_avx2.cpp).
//
// Every element goes through the batch code, the tail too (through a padded
// batch), so an element's result does not depend on its position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/kernels/loops.hpp"

namespace nx::ops::kernels::simd {

template <class T, class Arch> using batch = xsimd::batch<T, Arch>;

// Loads `count` (<= batch size) elements with stride s, padding with zeros.
template <class B, class T> B load_strided(const T* p, std::int64_t s, std::int64_t count) {
  alignas(64) T tmp[B::size] = {};
  for (std::int64_t k = 0; k < count; ++k) tmp[k] = p[k * s];
  return B::load_aligned(tmp);
}
template <class B, class T> void store_part(B v, T* out, std::int64_t count) {
  alignas(64) T tmp[B::size];
  v.store_aligned(tmp);
  std::copy(tmp, tmp + count, out);
}

// Primitives whose SIMD and scalar code give the same bits (IEEE-exact, or
// the same formula): rows shorter than a batch skip the padded batch.
template <Prim P> inline constexpr bool exact =
    P == Prim::add || P == Prim::sub || P == Prim::mul || P == Prim::div || P == Prim::neg || P == Prim::abs ||
    P == Prim::sign || P == Prim::maximum || P == Prim::minimum || P == Prim::floor || P == Prim::ceil ||
    P == Prim::round || P == Prim::sqrt || P == Prim::rsqrt;

// The streaming variants of the loops store with non-temporal stores: a
// result much larger than the caches is not read back soon, and streaming it
// skips reading the output's lines first (a third of an add's memory
// traffic). The driver picks them for large results (kernels.hpp).
template <class B> bool aligned_for(const typename B::value_type* out) {
#if defined(__x86_64__)
  return reinterpret_cast<std::uintptr_t>(out) % sizeof(B) == 0;
#else
  (void)out;
  return false;
#endif
}

template <class B> void store_streaming(typename B::value_type* p, const B& v) {
#if defined(__x86_64__)
  using T = typename B::value_type;
  if constexpr (sizeof(B) == 64) {
    if constexpr (std::is_same_v<T, float>) _mm512_stream_ps(p, v);
    else _mm512_stream_pd(p, v);
  } else if constexpr (sizeof(B) == 32) {
    if constexpr (std::is_same_v<T, float>) _mm256_stream_ps(p, v);
    else _mm256_stream_pd(p, v);
  } else {
    if constexpr (std::is_same_v<T, float>) _mm_stream_ps(p, v);
    else _mm_stream_pd(p, v);
  }
#else
  v.store_aligned(p);
#endif
}

// Runs the whole batches of a row: out[i..i+W) = compute(i), streamed when
// asked (and aligned); gives where the tail starts.
template <class B, bool Stream, class T, class Compute>
std::int64_t whole_batches(std::int64_t n, T* out, Compute compute) {
  constexpr std::int64_t W = B::size;
  std::int64_t i = 0;
  if (Stream && aligned_for<B>(out)) {
    for (; i + W <= n; i += W) store_streaming(out + i, compute(i));
#if defined(__x86_64__)
    _mm_sfence();  // streaming stores are weakly ordered: publish them before other threads read
#endif
  } else {
    for (; i + W <= n; i += W) compute(i).store_unaligned(out + i);
  }
  return i;
}

template <Prim P, class T, class Arch, bool Stream = false>
void unary_loop(std::int64_t n, const void* a_, std::int64_t sa, void* out_) {
  using B = batch<T, Arch>;
  constexpr std::int64_t W = B::size;
  const T* a = static_cast<const T*>(a_);
  T* out = static_cast<T*>(out_);
  if constexpr (exact<P>)
    if (n < W) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = Op<P>::scalar(a[i * sa]);
      return;
    }
  if (sa == 0) {  // one value, computed once
    T v = Op<P>::simd(B(a[0])).get(0);
    std::fill(out, out + n, v);
    return;
  }
  std::int64_t i = 0;
  if (sa == 1)
    i = whole_batches<B, Stream>(n, out, [&](std::int64_t k) { return Op<P>::simd(B::load_unaligned(a + k)); });
  else
    for (; i + W <= n; i += W) Op<P>::simd(load_strided<B>(a + i * sa, sa, W)).store_unaligned(out + i);
  if (i < n) store_part(Op<P>::simd(load_strided<B>(a + i * sa, sa, n - i)), out + i, n - i);
}

template <Prim P, class T, class Arch, bool Stream = false>
void binary_loop(std::int64_t n, const void* a_, std::int64_t sa, const void* b_, std::int64_t sb, void* out_) {
  using B = batch<T, Arch>;
  constexpr std::int64_t W = B::size;
  const T* a = static_cast<const T*>(a_);
  const T* b = static_cast<const T*>(b_);
  T* out = static_cast<T*>(out_);
  if constexpr (exact<P>)
    if (n < W) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = Op<P>::scalar(a[i * sa], b[i * sb]);
      return;
    }
  std::int64_t i = 0;
  if (sa == 1 && sb == 1) {
    i = whole_batches<B, Stream>(n, out, [&](std::int64_t k) {
      return Op<P>::simd(B::load_unaligned(a + k), B::load_unaligned(b + k));
    });
  } else if (sa == 1 && sb == 0) {
    const B vb(b[0]);
    i = whole_batches<B, Stream>(n, out, [&](std::int64_t k) { return Op<P>::simd(B::load_unaligned(a + k), vb); });
  } else if (sa == 0 && sb == 1) {
    const B va(a[0]);
    i = whole_batches<B, Stream>(n, out, [&](std::int64_t k) { return Op<P>::simd(va, B::load_unaligned(b + k)); });
  } else {
    for (; i + W <= n; i += W)
      Op<P>::simd(load_strided<B>(a + i * sa, sa, W), load_strided<B>(b + i * sb, sb, W)).store_unaligned(out + i);
  }
  if (i < n)
    store_part(Op<P>::simd(load_strided<B>(a + i * sa, sa, n - i), load_strided<B>(b + i * sb, sb, n - i)),
               out + i, n - i);
}

// Sums (products, maxima, minima) in the order of every instruction set
// (loops.hpp: reduce_lanes accumulators, combined by halves): its L
// accumulators are R = L / W batches, accumulator k * W + l in lane l of
// batch k. The whole groups of L elements go by batches, the last few one
// at a time (the scalar combine gives the SIMD one's bits); the batches are
// then halved, then the lanes of the last one. (Their partial is their
// finish: float32 and float64 accumulate in their own dtype.)
template <Prim P, class T, class Arch> struct BatchReduce {
  using B = batch<T, Arch>;
  static constexpr std::int64_t W = B::size, L = reduce_lanes<T>, R = L / W;
  static_assert(L % W == 0 && L * sizeof(T) <= reduce_state_bytes && reduce_piece % L == 0);

  static B combine(B x, B y) {
    if constexpr (P == Prim::reduce_sum) return x + y;
    else if constexpr (P == Prim::reduce_prod) return x * y;
    else if constexpr (P == Prim::reduce_max) return Op<Prim::maximum>::simd(x, y);
    else return Op<Prim::minimum>::simd(x, y);
  }
  [[gnu::noinline]] static void start(void* state) {
    std::fill_n(static_cast<T*>(state), L, Reducer<P>::template identity<T>());
  }
  [[gnu::noinline]] static void add(std::int64_t n, const void* in_, void* state) {
    const T* in = static_cast<const T*>(in_);
    T* held = static_cast<T*>(state);
    B acc[R];
    for (std::int64_t k = 0; k < R; ++k) acc[k] = B::load_aligned(held + k * W);
    std::int64_t i = 0;
    for (; i + L <= n; i += L)
      for (std::int64_t k = 0; k < R; ++k) acc[k] = combine(acc[k], B::load_unaligned(in + i + k * W));
    for (std::int64_t k = 0; k < R; ++k) acc[k].store_aligned(held + k * W);
    for (std::int64_t k = 0; i < n; ++i, ++k) held[k] = Reducer<P>::template combine<T>(held[k], in[i]);
  }
  [[gnu::noinline]] static void finish(const void* state, void* out) {
    const T* held = static_cast<const T*>(state);
    B acc[R];
    for (std::int64_t k = 0; k < R; ++k) acc[k] = B::load_aligned(held + k * W);
    for (std::int64_t w = R / 2; w >= 1; w /= 2)
      for (std::int64_t k = 0; k < w; ++k) acc[k] = combine(acc[k], acc[k + w]);
    alignas(64) T lanes[W];
    acc[0].store_aligned(lanes);
    for (std::int64_t w = W / 2; w >= 1; w /= 2)
      for (std::int64_t k = 0; k < w; ++k) lanes[k] = Reducer<P>::template combine<T>(lanes[k], lanes[k + w]);
    *static_cast<T*>(out) = lanes[0];
  }
};

// The row loops of primitive P (a row of the table flagged Simd) in dtype d.
template <Prim P, class T, class Arch> void fill_primitive(Table& t, int d) {
  constexpr Family family = info(P).family;
  if constexpr (family == Family::unary) {
    t.unary[int(P)][d] = &unary_loop<P, T, Arch>;
    t.unary_streaming[int(P)][d] = &unary_loop<P, T, Arch, true>;
  } else if constexpr (family == Family::binary) {
    t.binary[int(P)][d] = &binary_loop<P, T, Arch>;
    t.binary_streaming[int(P)][d] = &binary_loop<P, T, Arch, true>;
  } else {
    static_assert(family == Family::reduce, "ops/primitives.def: Simd flags a primitive with no SIMD loop");
    t.reduce[int(P)][d] = &reduce_whole<BatchReduce<P, T, Arch>>;
    t.reduce_pieces[int(P)][d] = {&BatchReduce<P, T, Arch>::start, &BatchReduce<P, T, Arch>::add,
                                  &BatchReduce<P, T, Arch>::finish, &BatchReduce<P, T, Arch>::finish};
  }
}

template <class Arch, class T> void fill_type(Table& t) {
  constexpr int d = int(std::is_same_v<T, float> ? DType::float32 : DType::float64);
#define PRIM(id, api, kind, arity, accepts, result, flags) \
  if constexpr (((flags) & Simd) != 0) fill_primitive<Prim::id, T, Arch>(t, d);
#include "ops/primitives.def"
#undef PRIM
}

template <class Arch> void fill(Table& t, const char* name) {
  fill_type<Arch, float>(t);
  fill_type<Arch, double>(t);
  t.arch = name;
}

}  // namespace nx::ops::kernels::simd
