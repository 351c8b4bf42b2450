// Bytecode as text: the listing of a code (rune-repl's `bytecode`,
// docs/vm.md), the line the instruction trace prints, and the pieces
// rune-repl's `stepi` shows.
#pragma once

#include <string>
#include <vector>

#include "vm/machine.hpp"

namespace rune::vm {

// The whole code: its registers' use, its instructions (those computing a
// value hoisted out of a loop marked "; hoisted from scan 0"; with
// source_lines, each marked with where its equation was traced,
// "; cloth.hpp:88"), then its fused kernels and the steps of its scans,
// indented.
std::string listing(const Code& code, bool source_lines = false);

// "  ; cloth.hpp:88": where the equation of instruction pc was traced; empty
// when unknown.
std::string site_text(const Code& code, std::size_t pc);

// The scans of a code and of its sub-codes with what the machine-code tier
// made of each, or will make once it has run enough, or why it leaves it
// on the VM (rune-repl's `native`).
std::string native_listing(const Code& code);

// One step of a fused kernel: "m2 = mul m1 t0".
std::string step_text(const FusedKernel& m, const FusedKernel::Step& s);

// One instruction: "mul_f64   s5 = s3 s4".
std::string instruction_text(const Code& code, const Instruction& in);

// The instruction and what it wrote, as the trace prints it.
std::string trace_line(const Code& code, const Instruction& in, const Frame& frame);

// A register's name and contents: "s5 = 2.5", "t2 = float32 [3]".
std::string register_text(const Code& code, const Frame& frame, Location at);

}  // namespace rune::vm
