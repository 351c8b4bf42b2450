// Counts every allocation through operator new, for the tests that require
// a steady state to allocate nothing (or only its results). Included by
// one file of a test executable; AddressSanitizer builds own operator new,
// and count nothing (`counting` is false there).
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace test {
inline std::atomic<long> allocations{0};
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool counting = false;
#else
inline constexpr bool counting = true;
#endif
}  // namespace test

#if !defined(__SANITIZE_ADDRESS__)
void* operator new(std::size_t n) {
  test::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// (GCC 12 takes the replaced pair for a mismatch where it inlines them)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
#endif
