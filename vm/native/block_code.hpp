// An elementwise fused kernel (one not in rows) as the code of one block
// (block_code.cpp), which the kernel's block loop in machine code runs for
// each block of its elements (x86/block_loop.cpp), where the VM runs the
// kernel's steps one after another over the block. Its steps in order, cut
// into segments: a run of steps the tier computes in vector registers
// (+ - * /, negation, sqrt and abs of one float type, and float32 exp and
// tanh where the machine emits them; their operands of one element or
// contiguous), one pass over the block that keeps the values it
// computes in registers and writes to their slots only those read after
// it; or one other step, a call of the row loop the VM calls, with the
// VM's arguments. Every lane is the IEEE operation of its element, or exp
// and tanh by the row loops' batch code instruction for instruction: the
// VM's bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vm/code.hpp"
#include "vm/native/runtime.hpp"

namespace rune::vm::native {

// What a machine's block loop has to hold a run in: vector registers, and
// general registers for the addresses of its slots read or written block
// by block (those of one element are read once, before the pass); the
// scratch registers its float32 exp and tanh take (-1: it calls their row
// loops).
struct RunLimits {
  int vectors = 0, pointers = 0;
  int exp_scratch = -1, tanh_scratch = -1;
};
// A machine's limits, its exp and tanh computed in registers only where
// the row loops the VM calls compute them in batches, as the emitted code
// does (RUNE_SIMD=portable's loops call the C library for each element).
RunLimits run_limits(int vectors, int pointers, int exp_scratch, int tanh_scratch);

struct BlockCode {
  struct Segment {
    std::vector<std::int32_t> steps;  // indices of the kernel's steps, in order
    bool run = false;                 // computed in registers (else one step, called out)
    nx::DType dtype{};                // (a run) the type of its values
  };
  std::vector<Segment> segments;
  // Per slot: its elements' stride in a block (0: one element, 1:
  // contiguous); whether a run writes it (read after its run, or a result
  // of the kernel: the others stay in registers); whether it is written
  // past the caches (FusedKernel::streamed).
  std::vector<std::int64_t> stride;
  std::vector<bool> written, streamed;
  RunLimits limits;  // (the machine's)
  // A run computes exp or tanh: its pass calls their row loops (for the
  // last elements, and exp's lanes out of its range), keeping the run's
  // registers in the loop's frame.
  bool calls_in_runs = false;
};

// The block code of a kernel not in rows, or why the tier leaves it on the
// VM.
const char* block_code(const FusedKernel& m, const RunLimits& limits, std::optional<BlockCode>& out);

// Why the tier leaves the kernel on the VM (null: it emits it).
const char* block_refusal(const FusedKernel& kernel, const RunLimits& limits);

// A machine's block loop (its Assembler and Emitter, constructed from the
// assembler, the kernel, its block code and whether to comment) published,
// or its listing ("" where the kernel stays on the VM).
template <class Assembler, class Emitter>
const void* emit_blocks(const FusedKernel& kernel, const RunLimits& limits, const char*& why) {
  std::optional<BlockCode> code;
  if ((why = block_code(kernel, limits, code))) return nullptr;
  return assemble<Assembler>([&](Assembler& as) { Emitter(as, kernel, *code, false).loop(); }, why);
}
template <class Assembler, class Emitter> std::string blocks_listing(const FusedKernel& kernel, const RunLimits& limits) {
  std::optional<BlockCode> code;
  if (block_code(kernel, limits, code)) return "";
  return assembly<Assembler>([&](Assembler& as) { Emitter(as, kernel, *code, true).loop(); });
}

// A run's registers: the operands of one element and the sign masks,
// loaded once before the pass (`held`), and the vector register each step's
// operands and result take in the pass, given as the events of a linear
// scan: at each step, the operands first read there are loaded, the
// operands read for the last time are freed, then the result is defined
// (in the register its first operand leaves, when it does, else the lowest
// free one other than its second operand's).
struct RunRegisters {
  struct Held {
    std::int32_t slot = -1;  // -1: a sign mask
    bool abs_mask = false;   // (a sign mask) the mask that clears the sign (abs), else the one that flips it (neg)
    int reg = 0;
  };
  struct Operand {
    std::int32_t slot = 0;
    int reg = 0;
    bool load = false;  // loaded from its slot before the step
  };
  struct Step {
    std::int32_t index = 0;  // the kernel's step
    Operand a, b;            // (b: binary steps)
    int mask = -1;           // the register of the mask negation or abs uses
    std::vector<int> scratch;  // (exp, tanh) registers of their intermediate values, free before and after
    int out = 0;
    bool write = false;  // its result written to its slot
  };
  std::vector<Held> held;
  std::vector<Step> steps;
  std::vector<std::int32_t> addressed;  // the slots read or written each pass, in the order their addresses are held
  int vectors = 0;                      // the vector registers it uses
};
RunRegisters run_registers(const FusedKernel& m, const BlockCode& code, const BlockCode::Segment& run);

// A call of a step's row loop on the lanes of a run's register (exp or
// tanh in a run: its last elements, exp's lanes outside its range): the
// step, the registers of its operand and its result, and what the run
// holds in registers (kept in the loop's frame across the call).
struct LanesCall {
  const FusedKernel::Step* step = nullptr;
  int a = 0, out = 0, vectors = 0;
  std::size_t addressed = 0;
};
inline LanesCall lanes_call(const FusedKernel& m, const RunRegisters& r, const RunRegisters::Step& s) {
  return {&m.steps[std::size_t(s.index)], s.a.reg, s.out, r.vectors, r.addressed.size()};
}

}  // namespace rune::vm::native
