// The machine: runs bytecode (code.hpp) in frames.
#pragma once

#include <exception>
#include <span>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "ops/pool.hpp"
#include "vm/code.hpp"

namespace rune::vm {

// Memory for the registers of frames larger than their inline room (and a
// large kernel's table of slot addresses): from nx's per-thread pools, so a
// steady state of calls allocates nothing (docs/embedding.md).
template <class T> struct FrameAllocator {
  using value_type = T;
  FrameAllocator() = default;
  template <class U> FrameAllocator(const FrameAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(nx::detail::pooled_bytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { nx::detail::give_back_pooled_bytes(p, n * sizeof(T)); }
  bool operator==(const FrameAllocator&) const { return true; }
};

// The registers of one run of a code. Every call runs in a frame of its
// own, so several threads may run one code at once.
struct Frame {
  explicit Frame(const Code& code)
      : code(&code),
        scalars(code.scalars.begin(), code.scalars.end()),
        tensors(code.tensors.size(), boost::container::default_init) {  // (nx::Tensor's default: empty)
    for (Location at : code.constants)  // (the other tensor registers start empty)
      if (!at.scalar) tensors[std::size_t(at.index)] = code.tensors[std::size_t(at.index)];
  }
  const Code* code;
  // (a small code's registers live in the frame itself: no allocation)
  boost::container::small_vector<Scalar, 32, FrameAllocator<Scalar>> scalars;
  boost::container::small_vector<nx::Tensor, 32, FrameAllocator<nx::Tensor>> tensors;
  // A call writing its results into the caller's memory (vm::execute_into):
  // its arguments and, per result, the buffer it goes to. Empty otherwise.
  std::span<const nx::Tensor> args, into;
};

// The checks (nx::check) of one call: a failing check does not stop the
// run; the first failure is thrown when the call returns (raise), or
// instead of an error raised after it. Calls nested in a call (a callback
// calling a compiled function) have their own. Outside any, a check throws
// where it fails (a debugger stepping through a code).
class CheckScope {
 public:
  CheckScope();
  ~CheckScope();
  CheckScope(const CheckScope&) = delete;
  CheckScope& operator=(const CheckScope&) = delete;
  // The check failing in the innermost scope of this thread (or thrown at once).
  static void failed(std::exception_ptr e);
  void raise() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  CheckScope* outer_;
  std::exception_ptr first_;
};

// Runs `code` on frame in a check scope: all of it, raising the first
// failing check at the end.
void execute_checked(const Code& code, Frame& frame);

// The code's results for `args` (concrete, one per parameter, of its types):
// start, execute_checked, results.
Values run(const Code& code, std::span<const nx::Tensor> args);

// A frame with `args` in the parameters' registers.
Frame start(const Code& code, std::span<const nx::Tensor> args);
// Runs the instructions on a frame whose parameters are in place: all of
// them, or those in [first, last) (a debugger steps one at a time).
void execute(const Code& code, Frame& frame);
void execute(const Code& code, Frame& frame, std::size_t first, std::size_t last);
// The values of the code's results in a frame that ran it (moved out of a
// frame given up).
Values results(const Code& code, const Frame& frame);
Values results(const Code& code, Frame&& frame);

// Calls on a frame's tensor registers (calls.cpp): a primitive by its
// rule, a construct by its eager rule, a check (its failure kept by the
// call's CheckScope).
void run_primitive(const Call& call, Frame& frame);
void run_construct(const Call& call, Frame& frame);
void run_check(const Call& call, Frame& frame);
// One fused kernel on a frame's registers (fused_kernel.cpp).
void run_fused(const FusedKernel& kernel, Frame& frame);
// One scan: its step's code run per row in a frame of its own (scan.cpp).
void run_scan(const ScanOp& scan, Frame& frame);
// Constructs run by their sub-codes (invoke.cpp).
void run_body(const Invoke& body, Frame& frame);
void run_cond(const Invoke& cond, Frame& frame);
void run_iterate(const Invoke& iterate, Frame& frame);

// Copies a value between frames (a construct's and its sub-code's): the
// same file on both sides, as a value's type decides its file.
inline void copy(Frame& to, Location at, const Frame& from, Location source) {
  if (at.scalar) to.scalars[std::size_t(at.index)] = from.scalars[std::size_t(source.index)];
  else to.tensors[std::size_t(at.index)] = from.tensors[std::size_t(source.index)];
}
// The same, leaving a tensor register of `from` empty.
inline void move(Frame& to, Location at, Frame& from, Location source) {
  if (at.scalar) to.scalars[std::size_t(at.index)] = from.scalars[std::size_t(source.index)];
  else to.tensors[std::size_t(at.index)] = std::move(from.tensors[std::size_t(source.index)]);
}

// The value at `at` as a tensor (a scalar register boxed in a fresh 0-d
// tensor), and a value put at `at` (a tensor's one element read into a
// scalar register).
nx::Tensor read(const Code& code, const Frame& frame, Location at);
void write(Frame& frame, Location at, const nx::Tensor& value);

}  // namespace rune::vm
