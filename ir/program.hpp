// Programs: what a traced function computes, as equations over values.
//
// Semantics. A program has typed values (dtype, shape, placement), numbered
// by their index in `types`. Its parameters are values given by the caller;
// each equation defines its outputs from its inputs, in order; `results`
// are returned. Values are immutable and defined once (SSA); nothing aliases
// in a program's meaning (views are a property of eager storage, not of
// programs). Elementwise arithmetic follows IEEE (NaN propagates as the nx
// functions document); no equation has a side effect, so dead equations can
// be removed and equal ones merged.
//
// A construct is an equation holding sub-programs (or C++ code); its rules
// are in the construct table (ir/construct.hpp), its payload below. The
// captures of a sub-program are values of the enclosing program it reads,
// passed as the construct's last inputs.
//
// A check (nx::check) has the conditions and the data as inputs and no
// outputs; evaluating it throws when a condition element is false. A
// callback runs C++ on its inputs' elements. These two have effects: passes
// keep them. A custom equation computes programs[0]; differentiating it
// applies its rule instead of differentiating the program.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "ops/primitive.hpp"
#include "rune/detail/custom_rule.hpp"
#include "rune/detail/linear_solve.hpp"

namespace rune::ir {

using nx::ops::Params;
using nx::ops::Prim;
using nx::ops::TensorType;

enum class OpKind : std::uint8_t {
  primitive,  // one nx primitive: prim, params
  constant,   // a concrete value: constant
#define CONSTRUCT(kind) kind,
#include "ir/constructs.def"
#undef CONSTRUCT
};

// Every construct's kind, in the order of ir/constructs.def.
inline constexpr OpKind construct_kinds[] = {
#define CONSTRUCT(kind) OpKind::kind,
#include "ir/constructs.def"
#undef CONSTRUCT
};

// Whether equations of this kind are constructs (ir/construct.hpp).
inline bool is_construct(OpKind kind) { return kind != OpKind::primitive && kind != OpKind::constant; }

struct Program;

// What an nx::check does when a condition is false: builds the exception
// from the index of the first false element (C order, over the condition
// leaves in turn) and the data leaves at that index. C++ code: a program
// holding a check has no text that parses back.
struct CheckCall {
  virtual ~CheckCall() = default;
  virtual std::exception_ptr make(const nx::Index& index, std::span<const nx::Tensor> data_at_index) const = 0;
  int condition_count = 0;
};

// C++ code run on concrete values inside a program (rune::callback). Like
// checks, it has an effect (it runs once per execution) and no text.
struct HostCall {
  virtual ~HostCall() = default;
  virtual std::vector<nx::Tensor> run(std::span<const nx::Tensor> args) const = 0;
  std::vector<TensorType> output_types;
};

// A function with a derivative rule of its own (rune::custom_jvp,
// rune::custom_vjp). Its equation's inputs are the function's inputs then
// the captures of its program (programs[0], which computes its value); the
// rule sees the function's inputs only.
using CustomRule = detail::CustomRule;

// A linear map known by its transpose, a program (a custom_vjp rule's
// pullback, traced): it appears in linear programs only. Its inputs are the
// tangents of the function's inputs, then the pullback program's captures
// (fixed values); the program maps the output cotangents (then the
// captures) to the inputs' cotangents.
struct LinearCall {
  std::shared_ptr<const Program> transpose;
  std::vector<TensorType> output_types;
};

// The typed payloads of constructs that need one (ir/construct.hpp has the
// rest of what a construct is).
//
// scan: inputs are the carry in (carry_count values), the scanned arrays
// (xs_count values of `length` rows) and the captures; the step takes the
// carry, a row of each xs and the captures, and returns the carry out then
// the step results (each stacked along a new leading axis of `length`
// rows as an output of the scan).
struct ScanInfo {
  std::int64_t length = 0;
  int carry_count = 0;
  int xs_count = 0;
  bool operator==(const ScanInfo&) const = default;
};

// iterate: inputs are the carry in (carry_count values), until's captures
// (until_captures values) and the step's captures. programs[0] (until)
// takes the carry and its captures and returns a bool tensor, the stop;
// programs[1] (the step) takes the carry, the stop and its captures and
// returns the carry out. Until is computed before each step; the loop ends
// when every element of the stop is true, and fails when that has not
// happened after `max` steps. Its outputs are the last carry. (The stop is
// one boolean from rune::iterate; under vmap it holds one per lane, and the
// step keeps the stopped lanes' carry.)
struct IterateInfo {
  std::int64_t max = 0;
  int carry_count = 0;
  int until_captures = 0;
  bool operator==(const IterateInfo&) const = default;
};

// cond (rune::cond, rune::switch_): inputs are the index, an int32 scalar,
// then the operands; every program (a branch) takes the operands and
// returns values of the same types, the cond's outputs. Only branch
// clamp(index, 0, branches - 1) is computed. rune::cond(pred, then, else)
// is the cond of int32(pred) over (else, then). A branch's operands are the
// captures of every branch (each program takes them all and reads its
// own), or in derived conds the tangents, residuals or cotangents.
// No payload: the programs are the branches.

// root: inputs are the point (point_count values, a zero of the residual
// that the caller's solve found) then the residual's captures; programs[0]
// (the residual) takes the same and returns values of as many elements as
// the point. Its outputs are the point; its derivative comes from the
// implicit function theorem, solving with the residual's Jacobian (by
// nx::solve, or by `linear_solve`, C++ code).
struct RootInfo {
  int point_count = 0;
  std::shared_ptr<const detail::LinearSolve> linear_solve;
  bool operator==(const RootInfo&) const = default;
};

// remat: inputs are the function's arguments then its captures; programs[0]
// computes its outputs. Linearizing it keeps only the inputs: the backward
// pass computes the program again.

// total_add (rune::Total::add): one input, added to the total `total` of
// the innermost collect of it open when it executes (none: nothing); an
// effect, left out of replays. total_add_lanes: the same for a map's lanes
// (the input's first axis), added one after another, as a loop over the
// lanes adds them. collect: inputs are the zero then the
// captures; programs[0] (the body) takes the captures; its outputs are the
// body's results, then the total: the zero plus what was added to it while
// the body ran.
inline bool adds_to_total(OpKind kind) { return kind == OpKind::total_add || kind == OpKind::total_add_lanes; }

struct TotalInfo {
  std::uint64_t total = 0;
  bool operator==(const TotalInfo&) const = default;
};

// A construct's payload (none for remat and cond, whose programs are all
// they hold); C++ code by address: two are the same only when they are one.
using ConstructInfo =
    std::variant<std::monostate, ScanInfo, IterateInfo, RootInfo, TotalInfo, std::shared_ptr<const LinearCall>,
                 std::shared_ptr<const CheckCall>, std::shared_ptr<const HostCall>, std::shared_ptr<const CustomRule>>;

// The lanes of a map (rune::vmap) that an equation's result holds along
// axis 0: `count` of them, the first being lane `first` (a scalarized part
// of such a result holds one). None (count 0): not known to be a map's.
struct Lanes {
  std::int64_t first = 0;
  std::int64_t count = 0;
  explicit operator bool() const { return count > 0; }
  // Those of element `element` of a result of `elements`: its lane alone.
  Lanes part(std::int64_t element, std::int64_t elements) const {
    return count > 0 ? Lanes{first + element / (elements / count), 1} : Lanes{};
  }
};

struct Equation {
  OpKind kind = OpKind::primitive;
  Prim prim{};
  Params params;
  std::vector<int> inputs;
  std::vector<int> outputs;
  nx::Tensor constant;
  ConstructInfo info;
  std::vector<std::shared_ptr<const Program>> programs;
  // The payload of C++ code a construct holds (LinearCall, CheckCall,
  // HostCall, CustomRule), or null when it holds another.
  template <class Code> const Code* code() const {
    const auto* held = std::get_if<std::shared_ptr<const Code>>(&info);
    return held ? held->get() : nullptr;
  }
  // Where it was traced: the file and line of the nx call or construct that
  // made it (none: rune made it, or a text without places). A note, as
  // `hoisted` is: equality leaves it out, and the text shows it when asked
  // (`; cloth.hpp:88`). The file outlives every program (a literal of the
  // caller's, or interned by source_file).
  rune::detail::CallSite site;
  // Made by a map's batching rule bound straight into the trace that
  // recorded it: the lanes its result holds (the NaN hunt names the lane by
  // them). A note like `site`, though the text leaves it out.
  Lanes lanes;
  // Moved out of a loop by the hoisting pass (ir/passes/hoist.hpp): it
  // computes a capture of the next loop of the program, whose listing says
  // so (vm/listing.hpp). A note, not part of the meaning: equality and the
  // text leave it out.
  bool hoisted = false;
};

struct Program {
  std::vector<TensorType> types;  // the type of each value, by index
  std::vector<int> params;
  std::vector<Equation> equations;
  std::vector<int> results;

  int add_value(const TensorType& type) {
    types.push_back(type);
    return int(types.size()) - 1;
  }
};

// Structural equality: same values, equations (constants bit for bit) and
// sub-programs.
bool equal(const Program& a, const Program& b);

// A file name read from a text, kept for the life of the process (an
// equation's site points at it); null past 4,096 distinct names or for a
// name longer than 4,096 characters.
const char* source_file(std::string_view name);
// A hash agreeing with `equal` (equal programs hash alike): the key of the
// codes kept for eager constructs (vm/executables.hpp). It reads the types,
// the wiring and the sub-programs; programs that differ only in a constant's
// bits, a parameter or a payload collide, and equal tells them apart.
std::size_t structural_hash(const Program& program);

// A copy of a program whose sub-programs, at every depth, are copies too:
// no object is shared with the original (the text and the debugger name
// values by their program object, so one object in two places would name
// its values twice).
std::shared_ptr<const Program> deep_copy(const Program& program);

// The output types of a construct equation given its input types; throws
// std::invalid_argument naming the construct when they do not fit.
std::vector<TensorType> construct_output_types(const Equation& eq, const std::vector<TensorType>& inputs);

}  // namespace rune::ir
