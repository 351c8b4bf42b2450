// The machine-code tier: units of the VM promoted to machine code once
// they have done enough work. A unit keeps its bytecode; native code is an
// attribute of it (docs/vm.md, "Machine code").
//
// Built for x86-64 (System V, x86/) and 64-bit ARM (AAPCS64, a64/) where
// asmjit is found (meson -Dnative); in a build without it nothing is
// promoted and every unit runs on the VM.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace rune::vm {
struct Code;
struct Instruction;
struct Invoke;
struct FusedKernel;
struct ScanOp;
union Scalar;
}  // namespace rune::vm

namespace rune::vm::native {

// RUNE_NATIVE (read once): off, on (the default where the tier is built:
// units promote by work) or eager (promote at once: the tests' third
// executor). A build without the tier is off whatever it says.
enum class Mode : std::uint8_t { off, on, eager };
Mode mode();
// Whether this build has the tier, and whether it emits fused kernels
// (both machines' emitters do; a build without the tier does not).
bool built();
bool fuses();

// A promoted scan step's loop: `length` trips over the step frame's scalar
// registers. `words` holds, for the xs rows the step reads, each one's row
// 0 and then each one's stride in bytes, and then each ys's row 0 (the
// same order as the scan loop's plan, vm/scan.cpp).
using ScanLoop = void (*)(Scalar* registers, const std::int64_t* words, std::int64_t length);
// A promoted iterate's loop over until's and the step's frames: until and
// the step in turn until the stop is true (0), or until `max` steps have
// run and the stop is still false (1: the caller raises the error).
using IterateLoop = int (*)(Scalar* until, Scalar* step, std::int64_t max);
// A promoted fused kernel's loop over its rows [begin, end) (a kernel not in
// rows: its elements), in order: `bases` holds each slot's base address in
// this run (vm/fused_kernel.cpp), then each scatter's result's.
using FusedLoop = void (*)(char* const* bases, std::int64_t begin, std::int64_t end);
// A promoted kernel not in rows: its steps over one block of n elements,
// `at` holding each slot's address of the block's first element (as the
// VM's blocks find them: vm/fused_kernel.cpp).
using BlockLoop = void (*)(char* const* at, std::int64_t n);

// An emitted loop (Unit::loop's answer) as the function it is. (The cast
// goes through void*: a function pointer from a pointer to const is
// refused by some compilers.)
template <class Loop> Loop as_loop(const void* loop) { return reinterpret_cast<Loop>(const_cast<void*>(loop)); }

// A unit promotes when the work it has done passes this many rows of a
// scan or trips of an iterate (RUNE_NATIVE=on).
inline constexpr std::int64_t promoted_rows = 1000;
// A fused kernel promotes when the elements it has computed pass this many.
inline constexpr std::int64_t promoted_elements = std::int64_t(1) << 17;

// What emits a unit: its loop, or null and why not (`culprit`: the
// instruction at fault, if one is).
using Emit = const void* (*)(const void* unit, const char*& why, const Instruction*& culprit);

// A unit's promotion: the work it has done, and its loop once emitted.
// Several threads may run one unit at once: the one that wins the
// compare-and-swap emits while the others interpret; the loop is published
// by a release store. A unit the tier cannot emit stays on the VM.
class Unit {
 public:
  // (after: the work before promotion, promoted_rows unless said)
  explicit Unit(std::int64_t after = promoted_rows) : after_(after) {}
  Unit(const Unit&) = delete;
  Unit& operator=(const Unit&) = delete;
  ~Unit();
  // The loop to run `what` with, its work counted first (a scan's rows, 0
  // for an iterate, whose trips are counted as they run: ran); emitted now
  // when the work passes the threshold, or null: interpret.
  // (`kind`, `unit_of_work`: the report's words, "a scan step", "rows")
  const void* loop(std::int64_t work, Emit emit, const void* what, const char* kind, const char* unit_of_work) {
    if (const void* done = loop_.load(std::memory_order_acquire)) return done;
    // (a unit refused, or being emitted, interprets without the call: every
    // run of a small kernel the tier leaves on the VM passes here)
    if (state_.load(std::memory_order_relaxed) != idle) return nullptr;
    return promote(work, emit, what, kind, unit_of_work);
  }
  void ran(std::int64_t work) { work_.fetch_add(work, std::memory_order_relaxed); }
  // Promotes after `work` (0: at once, negative: never) instead of
  // promoted_rows; set before the unit runs.
  void promote_after(std::int64_t work) { after_ = work; }
  std::int64_t after() const { return after_; }
  bool promoted() const { return loop_.load(std::memory_order_acquire) != nullptr; }
  std::int64_t work() const { return work_.load(std::memory_order_relaxed); }

 private:
  enum State : std::uint8_t { idle, emitting, emitted, refused };
  const void* promote(std::int64_t work, Emit emit, const void* what, const char* kind, const char* unit_of_work);
  std::atomic<const void*> loop_{nullptr};
  std::atomic<std::int64_t> work_{0};
  std::atomic<std::uint8_t> state_{idle};
  std::int64_t after_ = promoted_rows;
};

// Every scan and iterate of a code and of its sub-codes promotes after
// `work` (rune::JitOptions::native_after); its fused kernels at once when
// `work` is 0, never when it is negative, else after promoted_elements.
void promote_after(const Code& code, std::int64_t work);

// A scan's and an iterate's loops (scan_loop.cpp, iterate_loop.cpp, or
// unbuilt.cpp in a build without the tier): why the tier leaves one on the
// VM (null when it can emit it; it allocates nothing), the loop emitted
// (an Emit), and its assembly, each bytecode instruction as a comment
// above its code (the REPL's `native`; empty when it cannot be emitted).
const char* scan_refusal(const ScanOp& scan, const Instruction*& culprit);
const void* emit_scan(const void* scan, const char*& why, const Instruction*& culprit);
std::string scan_listing(const ScanOp& scan);
const char* iterate_refusal(const Invoke& iterate, const Instruction*& culprit);
const void* emit_iterate(const void* iterate, const char*& why, const Instruction*& culprit);
std::string iterate_listing(const Invoke& iterate);
// A fused kernel's loop (fused_loop.cpp), the same three: a FusedLoop for a
// kernel in rows, a BlockLoop for one not in rows; its
// refusal is worked out by writing the kernel's row or block code, which
// allocates.
const char* fused_refusal(const FusedKernel& kernel);
const void* emit_fused(const void* kernel, const char*& why, const Instruction*& culprit);
std::string fused_listing(const FusedKernel& kernel);
// Frees an emitted loop.
void release(const void* loop);

}  // namespace rune::vm::native
