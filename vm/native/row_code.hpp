// A fused kernel as the code of one row (row_code.cpp), which the kernel's
// loop in machine code runs once a row (each machine's fused_loop.cpp):
// every value a packed row of 16 bytes (two float64, four float32) in one
// vector register (xmm, q), or a scalar (a value of one element per row, or
// of one element); the steps' instructions, which the Trip emits
// (trip.hpp); the reads at the top of a row and the writes at its end.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vm/code.hpp"
#include "vm/native/runtime.hpp"
#include "vm/native/trip.hpp"

namespace rune::vm::native {

// A row the tier holds packed: 16 bytes. And the most registers of a row's
// code (its frame is on the machine stack).
inline constexpr std::size_t row_bytes = 16;
inline constexpr std::size_t most_registers = 1024;

// The kernel as one row's code.
struct RowCode {
  Code code;              // the row's registers (constants: the reductions' identities) and instructions
  std::vector<std::int32_t> packed;  // the registers holding a row
  std::int64_t row = 1;   // elements per row
  std::int64_t rows = 0;  // rows of the kernel
  // A row an index names: the operand's row (bases[base]: `length` rows of
  // `row_bytes`) that element q of the indices (bases[indices]) names for
  // row q; where it names none, a row of zeros (a gather) or no add (a
  // scatter: a null pointer).
  struct Pointer {
    std::int32_t base = 0, indices = 0;
    std::int32_t indices_register = 0;  // (pointers by one tensor of indices read it once a row)
    nx::DType index{};
    nx::ops::IndexMode mode{};
    std::int64_t length = 0, row_bytes = 0;
    bool scatter = false;
  };
  // A register read at the top of a row or written at its end: at
  // bases[base] plus the row's first element's bytes (element: always a
  // packed row), the row's (row: a value of one element per row), nothing
  // (fixed), or at pointer's row (pointer; an add, for a write).
  enum class At : std::uint8_t { element, row, fixed, pointer };
  struct Access {
    std::int32_t reg = 0;
    At at = At::fixed;
    std::int32_t base = 0;  // (pointer: the pointer's index)
  };
  std::vector<Pointer> pointers;
  std::vector<Access> reads, writes;
};

// The row code of a kernel, or why the tier leaves the kernel on the VM.
const char* row_code(const FusedKernel& m, std::optional<RowCode>& out);

// A row code as each machine's fused loop runs it: its frame (the code's
// registers at the machine's frame register `frame`, the rows packed); the
// events, each read just before the instruction that first reads its value
// (fewer values held at once), the instructions, and last the row's writes
// and adds (one event reading them); which events are reads (in order: the
// event, the read); and the pointers grouped by what names them (the same
// indices into rows of one length and size: one index read and checked a
// row for all).
struct RowPlan {
  RowPlan(const RowCode& rc, std::uint32_t frame);
  // Each event but the last (the writes) in order: read(access, event) at
  // a read, instruction(event) at an instruction.
  template <class Read, class Instruction>
  void each_event(const RowCode& rc, std::size_t events, Read read, Instruction instruction) const {
    std::size_t next_read = 0;
    for (std::size_t e = 0; e + 1 < events; ++e) {
      if (next_read < reads.size() && reads[next_read].first == e) read(rc.reads[reads[next_read++].second], e);
      else instruction(e);
    }
  }
  Frames frames;
  std::vector<Event> events;
  std::vector<std::pair<std::size_t, std::size_t>> reads;
  std::vector<std::vector<std::int32_t>> groups;
};

// Whether a pointer's indices are of a signed type.
bool signed_indices(const RowCode::Pointer& p);
// The row a pointer's index names when it is out of [0, length), which the
// loops find out of line (nx::ops::row_of: from the end, clamped, or none):
// called with (index, length, the operand's base, its row's bytes); a
// gather's row of zeros where it names none, a scatter's null (no add).
using NamedRow = const char* (*)(std::int64_t index, std::uint64_t length, const char* base, std::uint64_t bytes);
NamedRow named_row(const RowCode::Pointer& p);

// A row code's loop as a machine's Emitter writes it with its Assembler
// (Emitter(assembler, row code, comments, held); loop(); called_out()),
// its pointers held in registers when no instruction calls out (the loop
// is written once to see): published (null: `why` says why), or listed.
template <class Assembler, class Emitter> bool held_pointers(const RowCode& rc) {
  asmjit::CodeHolder code;
  code.init(environment());
  Assembler as(&code);
  Emitter emitter(as, rc, false, false);
  emitter.loop();
  return !emitter.called_out();
}
template <class Assembler, class Emitter> const void* emit_rows(const RowCode& rc, const char*& why) {
  const bool held = held_pointers<Assembler, Emitter>(rc);
  return assemble<Assembler>([&](Assembler& as) { Emitter(as, rc, false, held).loop(); }, why);
}
template <class Assembler, class Emitter> std::string rows_listing(const RowCode& rc) {
  const bool held = held_pointers<Assembler, Emitter>(rc);
  return assembly<Assembler>([&](Assembler& as) { Emitter(as, rc, true, held).loop(); });
}

}  // namespace rune::vm::native
