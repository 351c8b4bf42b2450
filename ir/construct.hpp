// The construct table: what every construct (an equation holding
// sub-programs or C++ code) has, as the primitive table (ops/primitive.hpp)
// gives it for primitives. One entry per OpKind other than primitive and
// constant; each construct's rules live in constructs/<name>*.cpp, and the
// table itself is constructs/table.cpp.
//
// The table is declared here, below the layers that fill it (ad/, batch/
// and constructs/ sit above ir/): ir/ calls through it without including
// them (docs/design.md, "The construct table").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/program.hpp"

namespace rune::ad {
class JvpTrace;
}
namespace rune::batch {
class BatchTrace;
}

namespace rune::ir {

// How the program text writes a construct:
//   <word> [<count> <unit>,] <group> (%a, ...), <group> (...), ...
//     <program name>
//       program (...)
//       ...
// `groups` names the input groups in order (the last takes the rest);
// `programs` names the sub-programs in order: the first is always there,
// the others may be left out (the type rule checks what is given), and with
// `repeats` the last name may follow any number of times.
struct TextForm {
  std::string_view word;
  std::string_view unit;  // empty: the construct has no count
  std::vector<std::string_view> groups;
  std::vector<std::string_view> programs;
  bool repeats = false;
};

// One run of a sub-program while a construct is stepped through (the REPL):
// the program, its arguments, and where it runs ("row 2", "step 1").
struct Trip {
  const Program* program = nullptr;
  std::vector<nx::Tensor> args;
  std::string label;
};

// A construct being stepped through, one sub-program run at a time; it
// computes what ir::eager_construct computes.
class Stepping {
 public:
  virtual ~Stepping() = default;
  // The first run (nullopt: nothing to run; outputs() gives the result).
  virtual std::optional<Trip> first() const = 0;
  // The run after the current one, whose results are given; nullopt when
  // the construct is done. Does not change the state (see advance).
  virtual std::optional<Trip> after(std::span<const nx::Tensor> results) const = 0;
  // Takes the current run's results; the next run is what after() gave.
  virtual void advance(std::span<const nx::Tensor> results) = 0;
  // The construct's outputs, once the last run's results are given; throws
  // the construct's errors (an iterate that never stopped).
  virtual std::vector<nx::Tensor> outputs(std::span<const nx::Tensor> last_results) const = 0;
};

// How the VM runs a construct (vm/compile.cpp): its sub-programs compiled
// to bytecode and run by an instruction of the construct's kind, or its
// eager rule called on tensors.
enum class Lowering : std::uint8_t {
  eager,    // the eager rule (C++ code, and what needs the rule's own state)
  body,     // programs[0] on the inputs: the construct's value is its body's
  scan,     // the scan loop over its step
  cond,     // the branch that inputs[0] chooses, on the other inputs
  iterate,  // until and step in turn, as the eager rule runs them
};

struct ConstructRules {
  std::string_view entry_point;  // the user's function, first in errors: "rune::scan"
  bool effect = false;           // runs once per execution; passes keep it
  bool replayed = true;          // false: a replay (ir::Replay) does not compute it again
  bool every_lane = false;       // under a map, every lane runs it, whatever its inputs (ir::bind_construct)
  std::optional<TextForm> text;  // none: C++ code, which has no text
  // Whether this equation holds C++ code all the same (its text does not
  // say it: rune::root's linear solve); null: never.
  bool (*holds_code)(const Equation&) = nullptr;

  // The output types from the input types (the sub-programs are checked
  // against them); throws std::invalid_argument naming the entry point.
  std::vector<TensorType> (*output_types)(const Equation&, std::span<const TensorType>) = nullptr;
  // Computed on concrete inputs.
  std::vector<nx::Tensor> (*eager)(const Equation&, std::span<const nx::Tensor>) = nullptr;
  Lowering lowering = Lowering::eager;
  // Before a staging trace records it: completes the equation (a custom
  // function traces its program; its captures join the inputs).
  void (*record)(Equation&, std::vector<nx::Tensor>& inputs) = nullptr;
  // Forward mode and linearization (as the JVP trace says) over inputs of
  // the trace; null: the construct has no derivative.
  std::vector<nx::Tensor> (*jvp)(ad::JvpTrace&, const Equation&, std::span<const nx::Tensor>) = nullptr;
  // In a linear program: the cotangents of the inputs (undefined for fixed
  // ones, which `inputs` gives; linear ones are undefined there) from those
  // of the outputs (some undefined: zero).
  std::vector<nx::Tensor> (*transpose)(const Equation&, std::span<const nx::Tensor> inputs,
                                       std::span<const TensorType> input_types,
                                       std::span<const nx::Tensor> output_cotangents) = nullptr;
  // Under vmap; null: lane by lane.
  std::vector<nx::Tensor> (*batch)(batch::BatchTrace&, const Equation&, std::span<const nx::Tensor>) = nullptr;

  // The text's parts (constructs with text): the count, the size of every
  // input group, and the equation from them (its programs are set apart).
  std::int64_t (*count)(const Equation&) = nullptr;
  std::vector<int> (*group_sizes)(const Equation&, std::size_t inputs) = nullptr;
  void (*from_text)(Equation&, std::int64_t count, std::span<const int> group_sizes) = nullptr;
  // Which input gives parameter `param` of sub-program `program` its type,
  // and whether as a row of it (the parser infers types across
  // constructs); -1: none.
  int (*param_source)(const Equation&, std::size_t program, std::size_t param, bool* row) = nullptr;

  // A loop whose stop (given) is still false after its last allowed trip:
  // throws its error (the VM raises it from the run that reached the limit).
  void (*still_running)(const Equation&, const nx::Tensor& stop) = nullptr;

  // Stepping through it (the REPL); null: computed whole.
  std::unique_ptr<Stepping> (*step)(const Equation&, std::vector<nx::Tensor> inputs) = nullptr;
};

// The rules of a construct kind (not primitive or constant).
const ConstructRules& construct_rules(OpKind kind);

// How the VM runs an equation: its construct's lowering; eager for a
// primitive (the VM runs it) and for a construct holding no program.
Lowering lowering(const Equation& eq);

// Whether an equation has an effect, or holds one in a sub-program (a loop
// or a branch that runs a callback): passes neither drop nor merge it.
bool has_effect(const Equation& eq);

// Whether a sub-program of an equation (or a program), at any depth, holds
// an equation that a replay leaves out (an add to a total); and the equation
// with those left out, as a replay computes it (so a loop or a branch that a
// replay records or runs whole adds nothing either).
bool holds_unreplayed(const Equation& eq);
bool holds_unreplayed(const Program& program);
Equation replayed_part(const Equation& eq);

// The word a construct's text starts with, if one does.
std::optional<OpKind> construct_named(std::string_view word);

}  // namespace rune::ir
