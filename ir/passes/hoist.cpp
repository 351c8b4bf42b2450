#include "ir/passes/hoist.hpp"

#include <algorithm>
#include <unordered_map>

#include "ir/passes/canonical.hpp"
#include "ir/passes/dce.hpp"

namespace rune::ir {

namespace {

// A loop's sub-program and where its captures meet the loop's inputs.
struct Body {
  std::size_t program = 0;         // in the loop's programs
  std::size_t first_capture = 0;   // its first parameter that is a capture
  std::size_t first_input = 0;     // the loop's input giving that parameter
  std::size_t new_captures_at = 0;  // where captures hoisted from it join the loop's inputs
};

// The loop's sub-programs with captures (none: not a loop), as
// ir/program.hpp lays out their parameters; read again after each hoist
// (an until's new captures move the step's).
std::vector<Body> bodies(const Equation& eq) {
  if (eq.kind == OpKind::scan) {
    const auto& s = std::get<ScanInfo>(eq.info);
    const auto carried = std::size_t(s.carry_count + s.xs_count);
    return {{0, carried, carried, eq.inputs.size()}};
  }
  if (eq.kind == OpKind::iterate) {
    const auto& s = std::get<IterateInfo>(eq.info);
    const auto carry = std::size_t(s.carry_count), step_first = carry + std::size_t(s.until_captures);
    return {{0, carry, carry, step_first}, {1, carry + 1, step_first, eq.inputs.size()}};  // (step: carry, stop, ...)
  }
  return {};
}

// Whether an equation whose inputs do not change from trip to trip may be
// computed before the loop instead (hoist.hpp says why these).
bool movable(const Equation& eq) {
  if (eq.kind != OpKind::primitive) return false;
  return !nx::ops::communicates(eq.prim) && eq.prim != Prim::broadcast;
}

// What of a sub-program moves out: the equations computed before the loop
// (constants among them, copied) and, in order, the values of them the
// sub-program still reads, which become its new captures.
struct Invariant {
  std::vector<bool> moved;      // per equation of the sub-program
  std::vector<bool> invariant;  // per equation: a primitive that could move (moved, or read by no value staying)
  std::vector<int> crossing;
};

bool large_elementwise(const Program& sub, const Equation& eq) {
  return nx::ops::is_elementwise(eq.prim) && nx::numel(sub.types[std::size_t(eq.outputs[0])].shape) > hoisted_elements;
}

// An invariant elementwise value larger than hoisted_elements stays in the
// loop when one of its operands of that size is read there anyway: in a
// loop over memory that does not fit the caches, computing it again in the
// kernel that reads its operand costs less than reading it as a value of
// its own (hoist.hpp). What reads a value that stays stays too; and its
// operands are then read in the loop: again until nothing changes.
void keep_large_elementwise_in(const Program& sub, std::vector<bool>& invariant, const std::vector<int>& defined_by) {
  auto large_value = [&](int v) { return nx::numel(sub.types[std::size_t(v)].shape) > hoisted_elements; };
  auto staying = [&](int v) {
    const int by = defined_by[std::size_t(v)];
    return by >= 0 && sub.equations[std::size_t(by)].kind == OpKind::primitive && !invariant[std::size_t(by)];
  };
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> read_staying(sub.types.size(), false);
    for (std::size_t i = 0; i < sub.equations.size(); ++i)
      if (!invariant[i])
        for (int v : sub.equations[i].inputs) read_staying[std::size_t(v)] = true;
    for (int v : sub.results) read_staying[std::size_t(v)] = true;
    for (std::size_t i = 0; i < sub.equations.size(); ++i) {
      const Equation& eq = sub.equations[i];
      if (!invariant[i]) continue;
      const bool stays =
          std::any_of(eq.inputs.begin(), eq.inputs.end(), staying) ||
          (large_elementwise(sub, eq) && std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](int v) {
             return large_value(v) && read_staying[std::size_t(v)];
           }));
      if (stays) invariant[i] = false, changed = true;
    }
  }
}

Invariant invariant_part(const Program& sub, std::size_t first_capture) {
  Invariant out;
  out.moved.assign(sub.equations.size(), false);
  out.invariant.assign(sub.equations.size(), false);
  std::vector<bool> fixed(sub.types.size(), false);    // the value is the same on every trip
  std::vector<int> defined_by(sub.types.size(), -1);  // of a fixed value: its equation
  for (std::size_t k = first_capture; k < sub.params.size(); ++k) fixed[std::size_t(sub.params[k])] = true;
  for (std::size_t i = 0; i < sub.equations.size(); ++i) {
    const Equation& eq = sub.equations[i];
    bool same = eq.kind == OpKind::constant || movable(eq);
    for (int v : eq.inputs) same = same && fixed[std::size_t(v)];
    if (!same) continue;
    fixed[std::size_t(eq.outputs[0])] = true;
    defined_by[std::size_t(eq.outputs[0])] = int(i);
    out.invariant[i] = eq.kind == OpKind::primitive;
  }
  keep_large_elementwise_in(sub, out.invariant, defined_by);
  // The crossing values: of invariant primitives, read by what stays.
  std::vector<bool> crosses(sub.types.size(), false);
  auto cross = [&](int v) {
    const int i = defined_by[std::size_t(v)];
    if (i < 0 || !out.invariant[std::size_t(i)] || crosses[std::size_t(v)]) return;
    crosses[std::size_t(v)] = true;
    out.crossing.push_back(v);
  };
  for (std::size_t i = 0; i < sub.equations.size(); ++i)
    if (!out.invariant[i])
      for (int v : sub.equations[i].inputs) cross(v);
  for (int v : sub.results) cross(v);
  // Backward from them: what they are computed from.
  std::vector<int> pending = out.crossing;
  while (!pending.empty()) {
    const int v = pending.back();
    pending.pop_back();
    const int i = defined_by[std::size_t(v)];
    if (i < 0 || out.moved[std::size_t(i)]) continue;
    out.moved[std::size_t(i)] = true;
    for (int u : sub.equations[std::size_t(i)].inputs) pending.push_back(u);
  }
  return out;
}

// Drops the captures a sub-program no longer reads (what read them moved
// out), from its parameters and the loop's inputs.
Program without_unread_captures(Equation& loop, const Body& body, Program sub) {
  std::vector<bool> read(sub.types.size(), false);
  for (const Equation& eq : sub.equations)
    for (int v : eq.inputs) read[std::size_t(v)] = true;
  for (int v : sub.results) read[std::size_t(v)] = true;
  for (std::size_t k = sub.params.size(); k-- > body.first_capture;) {
    if (read[std::size_t(sub.params[k])]) continue;
    sub.params.erase(sub.params.begin() + long(k));
    loop.inputs.erase(loop.inputs.begin() + long(body.first_input + k - body.first_capture));
    if (loop.kind == OpKind::iterate && body.program == 0) --std::get<IterateInfo>(loop.info).until_captures;
  }
  return sub;
}

// The sub-program without its invariant primitives (those not moved are
// read by no value staying, so they are dead), reading the crossing values
// as new captures that the loop passes in (`outside` gives their values in
// the enclosing program).
void pass_crossing_in(Equation& loop, const Body& body, const Invariant& part,
                      const std::unordered_map<int, int>& outside) {
  const Program& sub = *loop.programs[body.program];
  Program inside = sub;
  inside.equations.clear();
  for (std::size_t i = 0; i < sub.equations.size(); ++i)
    if (!part.invariant[i]) inside.equations.push_back(sub.equations[i]);
  std::unordered_map<int, int> captured;  // a crossing value -> its new parameter
  for (std::size_t k = 0; k < part.crossing.size(); ++k) {
    const int v = part.crossing[k];
    inside.params.push_back(captured[v] = inside.add_value(sub.types[std::size_t(v)]));
    loop.inputs.insert(loop.inputs.begin() + long(body.new_captures_at + k), outside.at(v));
  }
  if (loop.kind == OpKind::iterate && body.program == 0)
    std::get<IterateInfo>(loop.info).until_captures += int(part.crossing.size());
  auto read = [&](int& v) {
    if (auto c = captured.find(v); c != captured.end()) v = c->second;
  };
  for (Equation& eq : inside.equations)
    for (int& v : eq.inputs) read(v);
  for (int& v : inside.results) read(v);
  // (what only the moved equations read is dead now, captures among it)
  inside = without_unread_captures(loop, body, eliminate_dead_code(inside));
  loop.programs[body.program] = std::make_shared<Program>(std::move(inside));
}

// Moves the invariant part of one of the loop's sub-programs into `outer`
// (appended, before the loop, which comes next) and passes it to the
// sub-program as new captures.
void hoist_from(Equation& loop, const Body& body, Program& outer) {
  const Program& sub = *loop.programs[body.program];
  const Invariant part = invariant_part(sub, body.first_capture);
  if (part.crossing.empty()) return;
  std::unordered_map<int, int> outside;  // a value of the sub-program -> the outer one
  for (std::size_t k = body.first_capture; k < sub.params.size(); ++k)
    outside[sub.params[k]] = loop.inputs[body.first_input + k - body.first_capture];
  for (std::size_t i = 0; i < sub.equations.size(); ++i) {
    if (!part.moved[i]) continue;
    Equation copy = sub.equations[i];
    copy.hoisted = true;
    for (int& v : copy.inputs) v = outside.at(v);
    for (int& v : copy.outputs) v = outside[v] = outer.add_value(sub.types[std::size_t(v)]);
    outer.equations.push_back(std::move(copy));
  }
  pass_crossing_in(loop, body, part, outside);
}

Program hoisted(const Program& program) {
  Program out = program;
  out.equations.clear();
  for (const Equation& original : program.equations) {
    Equation eq = original;
    for (auto& sub : eq.programs) sub = std::make_shared<Program>(hoisted(*sub));  // inner loops first
    for (std::size_t b = 0; b < bodies(eq).size(); ++b) hoist_from(eq, bodies(eq)[b], out);
    out.equations.push_back(std::move(eq));
  }
  return out;
}

}  // namespace

Program hoist_loop_invariants(const Program& program) { return canonical(hoisted(program)); }

}  // namespace rune::ir
