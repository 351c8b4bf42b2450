// Counts every allocation, for the tests that require a steady state to
// allocate nothing (or only its results): the C allocation functions
// (malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign) are
// replaced by ones that count and forward to glibc's own (__libc_malloc,
// ...). operator new, in any form, goes through them (libstdc++'s calls
// malloc, its aligned form aligned_alloc), and so does nx's pool
// (std::aligned_alloc, ops/storage.cpp). Included by one file of a test
// executable. Sanitizer builds own the allocator, and builds on another C
// library lack glibc's entry points: they count nothing (`counting` is
// false there).
//
// To find what allocates: with RUNE_TEST_ALLOCATION_TRACE=1 in the
// environment, every allocation made while test::tracing is set prints a
// backtrace on stderr (addresses; `addr2line -f -C -e EXECUTABLE`, or
// `-rdynamic` for names).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdlib>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RUNE_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RUNE_TEST_SANITIZED 1
#endif

#if !defined(RUNE_TEST_SANITIZED) && defined(__GLIBC__)
#define RUNE_TEST_COUNTING 1
#include <execinfo.h>
#include <unistd.h>
#endif

namespace test {
inline std::atomic<long> allocations{0};
inline std::atomic<bool> tracing{false};
#if defined(RUNE_TEST_COUNTING)
inline constexpr bool counting = true;
#else
inline constexpr bool counting = false;
#endif
}  // namespace test

#if defined(RUNE_TEST_COUNTING)
namespace test::detail {
inline void print_backtrace() {
  static const bool requested = [] {
    const char* v = std::getenv("RUNE_TEST_ALLOCATION_TRACE");
    return v && *v && *v != '0';
  }();
  // (backtrace allocates on its first call: that allocation is not traced)
  static thread_local bool inside = false;
  if (!requested || inside) return;
  inside = true;
  void* frames[48];
  const int n = backtrace(frames, 48);
  static const char header[] = "-- an allocation:\n";
  (void)!write(2, header, sizeof header - 1);
  backtrace_symbols_fd(frames, n, 2);
  inside = false;
}
inline void counted() {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (tracing.load(std::memory_order_relaxed)) print_backtrace();
}
}  // namespace test::detail

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);

void* malloc(std::size_t n) noexcept {
  test::detail::counted();
  return __libc_malloc(n);
}
void* calloc(std::size_t count, std::size_t n) noexcept {
  test::detail::counted();
  return __libc_calloc(count, n);
}
void* realloc(void* p, std::size_t n) noexcept {
  test::detail::counted();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t alignment, std::size_t n) noexcept {
  test::detail::counted();
  return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept {
  test::detail::counted();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) noexcept {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  test::detail::counted();
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) noexcept { __libc_free(p); }
}
#endif
