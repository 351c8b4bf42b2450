// The pooled allocator behind every tensor's storage and handle.
//
// Buffers are 64-byte aligned and rounded up to a size class (powers of two
// with four steps between them). Each thread keeps a few free buffers per
// class, so a loop of same-sized operations reuses the buffers it just freed
// and calls malloc only until it reaches its steady state. Large buffers are
// cached too: a fresh 40 MB buffer costs ~10k page faults, which is most of
// an eager elementwise op over 10M floats.
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "ops/pool.hpp"
#include "rune/tensor.hpp"

namespace nx::detail {
namespace {

constexpr std::size_t alignment = 64;
constexpr int class_count = 4 * 56;     // enough classes for 2^56 bytes
// No request comes near it: one value holds at most 2^48 elements of at most
// 16 bytes (ops/sizes.hpp). Larger requests fail as memory that cannot be had.
constexpr std::size_t largest_request = std::size_t(1) << 55;
constexpr std::size_t cache_per_class = 8;
constexpr std::size_t cached_bytes_limit = std::size_t(1) << 30;

// Size class of a request: 64 B granules below 256 B, then four classes per
// power of two (waste at most 25%).
int size_class(std::size_t bytes) {
  if (bytes <= 256) return int((bytes + 63) / 64);  // 0..4
  int log2 = 63 - __builtin_clzll(bytes - 1);       // bytes in (2^log2, 2^(log2+1)]
  std::size_t quarter = std::size_t(1) << (log2 - 2);
  int step = int((bytes - 1 - (std::size_t(1) << log2)) / quarter);  // 0..3
  return 5 + (log2 - 8) * 4 + step;
}
std::size_t class_bytes(int cls) {
  if (cls <= 4) return std::size_t(cls == 0 ? 1 : cls) * 64;
  int log2 = (cls - 5) / 4 + 8, step = (cls - 5) % 4;
  return (std::size_t(1) << log2) + std::size_t(step + 1) * (std::size_t(1) << (log2 - 2));
}

// Set when this thread's caches are destroyed at its exit: values that die
// later (statics of the main thread) go straight back to malloc.
thread_local bool caches_gone = false;

struct ThreadCache {
  std::vector<void*> free[class_count];
  std::size_t cached = 0;
  ThreadCache() {
    for (auto& list : free) list.reserve(cache_per_class);  // so releasing never allocates
  }
  ~ThreadCache() {
    caches_gone = true;
    for (auto& list : free)
      for (void* p : list) std::free(p);
  }
};
thread_local ThreadCache cache;

void* system_allocate(std::size_t bytes) {
  void* p = std::aligned_alloc(alignment, bytes);
  if (!p) throw std::bad_alloc();
  return p;
}

void* pool_allocate(std::size_t bytes, std::size_t* granted) {
  if (bytes > largest_request) throw std::bad_alloc();
  int cls = size_class(bytes);
  *granted = class_bytes(cls);
  if (caches_gone) return system_allocate(*granted);
  auto& list = cache.free[cls];
  if (!list.empty()) {
    void* p = list.back();
    list.pop_back();
    cache.cached -= *granted;
    return p;
  }
  return system_allocate(*granted);
}

void pool_release(void* p, std::size_t granted) {
  int cls = size_class(granted);
  if (caches_gone) return std::free(p);
  auto& list = cache.free[cls];
  if (list.size() < cache_per_class && cache.cached + granted <= cached_bytes_limit) {
    list.push_back(p);
    cache.cached += granted;
  } else {
    std::free(p);
  }
}

// Handles (TensorImpl) and storage headers are small fixed-size objects:
// a free list per thread and per type, linked through the free objects
// themselves (taking and giving back are a few instructions: every result
// of a compiled call does both).
template <class T> struct ObjectCache {
  static constexpr std::size_t capacity = 4096;
  static constexpr std::align_val_t align{alignof(T)};
  static_assert(sizeof(T) >= sizeof(void*));
  void* head = nullptr;
  std::size_t count = 0;
  ~ObjectCache() {
    caches_gone = true;
    while (head) ::operator delete(std::exchange(head, *static_cast<void**>(head)), align);
  }
  void* take() {
    if (caches_gone || !head) return ::operator new(sizeof(T), align);
    --count;
    return std::exchange(head, *static_cast<void**>(head));
  }
  void give(void* p) {
    if (caches_gone || count == capacity) return ::operator delete(p, align);
    *static_cast<void**>(p) = head;
    head = p;
    ++count;
  }
};
thread_local ObjectCache<TensorImpl> handles;
thread_local ObjectCache<Storage> headers;

}  // namespace

void* pooled_bytes(std::size_t bytes) {
  std::size_t granted;
  return pool_allocate(bytes, &granted);
}

void give_back_pooled_bytes(void* p, std::size_t bytes) noexcept {
  pool_release(p, class_bytes(size_class(bytes)));
}

boost::intrusive_ptr<Storage> Storage::allocate(std::size_t bytes) {
  boost::intrusive_ptr<Storage> s = adopt(new Storage);
  if (bytes <= inline_bytes) {
    s->data = s->inline_data;
    s->bytes = inline_bytes;
  } else {
    s->data = pool_allocate(bytes, &s->bytes);
  }
  return s;
}

Storage::~Storage() {
  // (no data: taken by a compiled call, nx::ops::take_buffer)
  if (!borrowed && data && !holds_inline()) pool_release(data, bytes);
}

Tracer::~Tracer() = default;

void* TensorImpl::operator new(std::size_t) { return handles.take(); }
void TensorImpl::operator delete(void* p) { handles.give(p); }
void* Storage::operator new(std::size_t) { return headers.take(); }
void Storage::operator delete(void* p) { headers.give(p); }

}  // namespace nx::detail
