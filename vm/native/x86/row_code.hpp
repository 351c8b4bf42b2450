// A fused kernel as the code of one row (row_code.cpp), which the kernel's
// loop in machine code runs once a row (fused_loop.cpp): every value a packed
// row of 16 bytes (two float64, four float32) in one xmm register, or a
// scalar (a value of one element per row, or of one element); the steps'
// instructions, which the Trip emits (trip.hpp); the reads at the top of a
// row and the writes at its end.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vm/code.hpp"

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
  // bases[base] + offset, plus the row's first element's bytes (element),
  // the row's (row: a value of one element per row), nothing (fixed), or at
  // pointer's row (pointer; an add, for a write).
  enum class At : std::uint8_t { element, row, fixed, pointer };
  struct Access {
    std::int32_t reg = 0;
    At at = At::fixed;
    std::int32_t base = 0;  // (pointer: the pointer's index)
    std::int32_t offset = 0;
  };
  std::vector<Pointer> pointers;
  std::vector<Access> reads, writes;
};

// The row code of a kernel, or why the tier leaves the kernel on the VM.
const char* row_code(const FusedKernel& m, std::optional<RowCode>& out);

}  // namespace rune::vm::native
