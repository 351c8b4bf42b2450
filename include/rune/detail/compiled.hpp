// What rune::jit needs from the layers below, without exposing programs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "rune/program.hpp"
#include "rune/tensor.hpp"
#include "rune/tree.hpp"

namespace rune {
namespace ir {
struct Program;
}
namespace vm {
struct Code;
}

namespace detail {

// A map running on this thread (rune::vmap): its axis (0 for a map without
// a name) and lane count.
struct RunningMap {
  std::uint64_t axis;
  std::int64_t lanes;
  bool operator==(const RunningMap&) const = default;
};
using RunningMaps = boost::container::small_vector<RunningMap, 2>;
// The maps running on this thread, outermost first: part of a compiled
// call's key, since a trace inside them reads their lane counts and names
// their axes (rune::lanes, rune::lane_count).
RunningMaps running_maps();

// What a compiled function's call is keyed by: its arguments' key and the
// maps around it.
struct CallKey {
  TreeKey args;
  RunningMaps maps;
  bool operator==(const CallKey&) const = default;
};
struct CallKeyHash {
  std::size_t operator()(const CallKey& key) const {
    std::size_t seed = key.args.hash();
    for (const RunningMap& m : key.maps) {
      boost::hash_combine(seed, m.axis);
      boost::hash_combine(seed, m.lanes);
    }
    return seed;
  }
};

// A traced function ready to run for one key.
struct Executable {
  std::shared_ptr<const vm::Code> code;     // the program, simplified and compiled to bytecode
  std::shared_ptr<const void> result_like;  // the result's structure (its C++ type fixed by the key)
};

// The compiled form of a traced program: the passes (values of up to
// `scalar_elements` elements split into scalars), then the bytecode, whose
// loops are promoted to machine code after `native_after` rows or trips.
std::shared_ptr<const vm::Code> compile(std::shared_ptr<const ir::Program> traced, std::int64_t scalar_elements,
                                        std::int64_t native_after);
// A call's result leaves: a few of them without allocating.
using Values = boost::container::small_vector<nx::Tensor, 4>;
// Runs compiled code on the argument leaves: donated storage is taken when
// the call returns; results share no storage with the arguments or the
// program's constants.
Values execute(const vm::Code& code, std::span<const nx::Tensor> args, std::span<const nx::Tensor> captures);
// The executable's program (after the passes) with its values' paths.
Program named_program(const Executable& exe, std::vector<std::string> params, std::vector<std::string> results);
// With RUNE_JIT_DEBUG set to a nonzero integer, prints on stderr the first
// difference of a new key from the latest call's. Once a compiled function
// (`warned` is its flag) has traced on retrace_warning_calls calls in a row,
// prints a warning naming what keeps changing, debugging or not.
inline constexpr int retrace_warning_calls = 8;
void report_retrace(const CallKey& here, const CallKey& previous, int traced_in_a_row, bool& warned);

}  // namespace detail
}  // namespace rune
