// What each instruction reads and writes, from the opcode table's operands
// and side tables (vm/opcodes.def): the one answer the memory plan, the
// listing, the instruction trace and a verifier of codes ask for.
#pragma once

#include <string_view>

#include <boost/container/small_vector.hpp>

#include "vm/code.hpp"

namespace rune::vm {

// The side table an opcode's `aux` indexes.
enum class Table : std::uint8_t { none, calls, kernels, scans, invokes, releases };

// What the machine-code tier does with an opcode (opcodes.def's `tier`).
enum class Tier : std::uint8_t { emit, call, vm };

// What one of an instruction's fields dst, a, b, c is for an opcode.
enum class Operand : std::uint8_t { none, scalar, tensor, number };

struct OpInfo {
  std::string_view name;
  std::string_view operands;  // as in opcodes.def: "s:dst s:a s:b"
  Table table;
  Tier tier;
  std::string_view meaning;
};

inline constexpr OpInfo op_infos[] = {
#define OP(name, operands, table, tier, meaning) {#name, operands, Table::table, Tier::tier, meaning},
#include "vm/opcodes.def"
#undef OP
};
constexpr const OpInfo& info(Op op) { return op_infos[int(op)]; }

// Field k (0: dst, 1: a, 2: b, 3: c) of an opcode, read off its operands.
constexpr Operand operand(Op op, int k) {
  std::string_view rest = info(op).operands;
  for (int field = 0; !rest.empty(); ++field) {
    const std::size_t space = rest.find(' ');
    const std::string_view word = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    if (field != k || word == "aux") continue;
    if (word.starts_with("s:")) return Operand::scalar;
    if (word.starts_with("t:")) return Operand::tensor;
    return Operand::number;
  }
  return Operand::none;
}

// The registers an instruction reads and those it writes, in its fields'
// order or its side table's. A release reads and writes none: the
// registers it lets go are dead already (Code::releases lists them).
using Registers = boost::container::small_vector<Location, 4>;
Registers reads(const Code& code, const Instruction& in);
Registers writes(const Code& code, const Instruction& in);

// The opcode of a scalar instruction computing `prim` of `family` on
// operands of `dtype`: + - * / and negation of float32 and float64 inline
// (IEEE arithmetic: the eager kernels' bits), anything else through its
// row loop (unary, binary, select, convert).
Op scalar_op(nx::ops::Family family, nx::ops::Prim prim, nx::DType dtype);

}  // namespace rune::vm
