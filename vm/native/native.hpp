// The machine-code tier: units of the VM promoted to machine code once
// they have done enough work. A unit keeps its bytecode; native code is an
// attribute of it (docs/vm.md, "Machine code").
//
// Built for x86-64 (System V) where asmjit is found (meson -Dnative); in a
// build without it nothing is promoted and every unit runs on the VM.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace rune::vm {
struct Instruction;
struct ScanOp;
union Scalar;
}  // namespace rune::vm

namespace rune::vm::native {

// RUNE_NATIVE (read once): off, on (the default where the tier is built:
// units promote by work) or eager (promote at once: the tests' third
// executor). A build without the tier is off whatever it says.
enum class Mode : std::uint8_t { off, on, eager };
Mode mode();
// Whether this build has the tier.
bool built();

// A promoted scan step's loop: `length` trips over the step frame's scalar
// registers. `words` holds, for the xs rows the step reads, each one's row
// 0 and then each one's stride in bytes, and then each ys's row 0 (the
// same order as the scan loop's plan, vm/scan.cpp).
using ScanLoop = void (*)(Scalar* registers, const std::int64_t* words, std::int64_t length);

// A scan promotes when the rows it has run pass this many (RUNE_NATIVE=on).
inline constexpr std::int64_t promoted_rows = 1000;

// A scan's promotion: the rows it ran, and its native loop once emitted.
// Several threads may run one scan at once: the one that wins the
// compare-and-swap emits while the others interpret; the loop is published
// by a release store. A step the tier cannot emit stays on the VM.
class ScanUnit {
 public:
  ScanUnit() = default;
  ScanUnit(const ScanUnit&) = delete;
  ScanUnit& operator=(const ScanUnit&) = delete;
  ~ScanUnit();
  // The loop to run `length` rows of `scan` with (emitted now when this
  // call passes the threshold), or null: interpret.
  ScanLoop loop(const ScanOp& scan, std::int64_t length) {
    if (ScanLoop done = loop_.load(std::memory_order_acquire)) return done;
    return promote(scan, length);
  }
  bool promoted() const { return loop_.load(std::memory_order_acquire) != nullptr; }
  std::int64_t rows() const { return rows_.load(std::memory_order_relaxed); }

 private:
  enum State : std::uint8_t { idle, emitting, emitted, refused };
  ScanLoop promote(const ScanOp& scan, std::int64_t length);
  std::atomic<ScanLoop> loop_{nullptr};
  std::atomic<std::int64_t> rows_{0};
  std::atomic<std::uint8_t> state_{idle};
};

// Why the tier leaves a scan on the VM (null when it can emit its loop;
// `culprit`: the instruction at fault, if one is). It allocates nothing.
const char* scan_refusal(const ScanOp& scan, const Instruction*& culprit);
// Emits a scan's loop, or says why not (null; `culprit`: the instruction
// at fault, if one is); frees one (scan_loop.cpp, or unbuilt.cpp in a
// build without the tier).
ScanLoop emit_scan(const ScanOp& scan, const char*& why, const Instruction*& culprit);
void release(ScanLoop loop);
// The assembly of a scan's loop, each bytecode instruction as a comment
// above its code (the REPL's `native`); empty when it cannot be emitted.
std::string scan_listing(const ScanOp& scan);

}  // namespace rune::vm::native
