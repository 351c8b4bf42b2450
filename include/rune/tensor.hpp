// nx::Tensor: a cheap, reference-counted handle to an immutable n-d array.
//
// A handle points at a TensorImpl, which is either concrete (a strided view of
// a Storage) or a stand-in owned by a trace (a Tracer, no elements). Copying a
// Tensor shares the impl; operations never mutate their operands.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include <boost/intrusive_ptr.hpp>

#include "rune/detail/call_site.hpp"
#include "rune/dtype.hpp"

namespace nx {

class Tensor;

namespace detail {

// Counts references for boost::intrusive_ptr; atomic because values are
// shared between threads (pullbacks, compiled functions called concurrently).
struct RefCounted {
  mutable std::atomic<std::int32_t> refs{0};
};
// Inline: every operation copies and drops handles, so these are hot.
template <class T> void add_ref(const T* p) { p->refs.fetch_add(1, std::memory_order_relaxed); }
template <class T> void release(const T* p) {
  if (p->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p;
}
// The first handle of an object just made: its count set without an atomic
// read-modify-write (no other thread can see it yet).
template <class T> boost::intrusive_ptr<T> adopt(T* fresh) {
  fresh->refs.store(1, std::memory_order_relaxed);
  return boost::intrusive_ptr<T>(fresh, false);
}

// A 64-byte aligned buffer from the pooled allocator (ops/storage.cpp), or
// one of at most inline_bytes inside the storage itself (a small value then
// costs one allocation less).
struct alignas(64) Storage final : RefCounted {
  static constexpr std::size_t inline_bytes = 64;
  void* data = nullptr;
  std::size_t bytes = 0;
  // Set when the buffer was given up to a compiled call (nx::donate):
  // every later read of a value viewing it throws.
  std::atomic<bool> donated{false};
  // Caller memory (nx::borrow): not freed here, never donated; `writable`
  // when borrowed through a pointer to non-const (a call may write results
  // into it).
  bool borrowed = false;
  bool writable = true;
  alignas(64) unsigned char inline_data[inline_bytes];

  bool holds_inline() const { return data == inline_data; }
  static boost::intrusive_ptr<Storage> allocate(std::size_t bytes);
  ~Storage();
  static void* operator new(std::size_t bytes);
  static void operator delete(void* p);
};
inline void intrusive_ptr_add_ref(const Storage* s) { add_ref(s); }
inline void intrusive_ptr_release(const Storage* s) { release(s); }

struct TensorImpl;

// The value of a trace (a transformation in progress); see ir/ and ad/.
struct Tracer : RefCounted {
  // The trace that made this value: its position on the thread's stack of
  // traces (from 1) and its unique id, so a value that outlives its trace is
  // recognized.
  int level = 0;
  std::uint64_t trace_id = 0;

  virtual ~Tracer();
  // The value one level down that holds this one's elements (a JVP tracer's
  // primal), or null for a stand-in, whose elements do not exist yet.
  virtual boost::intrusive_ptr<TensorImpl> primal() const = 0;
  // The entry point whose trace made this value ("rune::scan", "rune::jit").
  virtual std::string_view traced_by() const = 0;
};
inline void intrusive_ptr_add_ref(const Tracer* t) { add_ref(t); }
inline void intrusive_ptr_release(const Tracer* t) { release(t); }

using Strides = boost::container::small_vector<std::int64_t, 4>;

struct TensorImpl final : RefCounted {
  DType dtype = DType::float32;
  Placement placement = Placement::host();
  Shape shape;
  // Concrete values: element strides (may be 0 or negative) and the offset in
  // elements of element [0, ..., 0] from storage->data.
  Strides strides;
  std::int64_t offset = 0;
  boost::intrusive_ptr<Storage> storage;
  // Stand-ins: the trace's value; storage is null.
  boost::intrusive_ptr<Tracer> tracer;
  // Set on the handle nx::donate returns: a compiled call given it takes
  // its storage (marks it donated) when the call returns.
  bool donated_to_call = false;

  static void* operator new(std::size_t bytes);
  static void operator delete(void* p);
};
inline void intrusive_ptr_add_ref(const TensorImpl* t) { add_ref(t); }
inline void intrusive_ptr_release(const TensorImpl* t) { release(t); }

}  // namespace detail

class Tensor {
 public:
  Tensor() = default;  // holds nothing: any use but assignment throws
  explicit Tensor(boost::intrusive_ptr<detail::TensorImpl> impl) : impl_(std::move(impl)) {}

  DType dtype() const { return checked().dtype; }
  const Shape& shape() const { return checked().shape; }
  std::int64_t ndim() const { return std::int64_t(checked().shape.size()); }
  std::int64_t numel() const { return nx::numel(checked().shape); }
  Placement placement() const { return checked().placement; }

  bool defined() const { return impl_ != nullptr; }
  // True for a stand-in of a trace (a value with no elements).
  bool is_traced() const { return checked().tracer != nullptr; }
  detail::TensorImpl* impl() const { return impl_.get(); }
  const detail::TensorImpl& checked() const {
    if (!impl_) throw_undefined();
    return *impl_;
  }

 private:
  [[noreturn]] static void throw_undefined();
  boost::intrusive_ptr<detail::TensorImpl> impl_;
};

// The first tensor operand of an nx function: it converts from a Tensor
// implicitly and carries the place the call was written at, which the
// function makes the thread's current one while it runs (nx::detail::Calling),
// so that the equation a trace records and the error a misuse raises name
// the caller's file and line. Spelled as a type because operators cannot
// take a defaulted place; `nx::sin` still calls as a function of a Tensor.
class Operand {
 public:
  Operand(const Tensor& t, rune::detail::CallSite site = rune::detail::CallSite::current()) noexcept
      : tensor_(t), site_(site) {}
  operator const Tensor&() const noexcept { return tensor_; }
  const Tensor& tensor() const noexcept { return tensor_; }
  const rune::detail::CallSite& site() const noexcept { return site_; }
  // The tensor's own (so the functions taking one read as with a Tensor).
  DType dtype() const { return tensor_.dtype(); }
  const Shape& shape() const { return tensor_.shape(); }
  std::int64_t ndim() const { return tensor_.ndim(); }
  std::int64_t numel() const { return tensor_.numel(); }
  Placement placement() const { return tensor_.placement(); }
  bool defined() const { return tensor_.defined(); }
  bool is_traced() const { return tensor_.is_traced(); }
  detail::TensorImpl* impl() const { return tensor_.impl(); }

 private:
  const Tensor& tensor_;
  rune::detail::CallSite site_;
};

// The left side of a compound assignment (x += 1.), placed as an Operand.
class Assigned {
 public:
  Assigned(Tensor& t, rune::detail::CallSite site = rune::detail::CallSite::current()) noexcept
      : tensor_(t), site_(site) {}
  Tensor& tensor() const noexcept { return tensor_; }
  const rune::detail::CallSite& site() const noexcept { return site_; }

 private:
  Tensor& tensor_;
  rune::detail::CallSite site_;
};

}  // namespace nx
