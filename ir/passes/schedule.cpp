#include "ir/passes/schedule.hpp"

#include <algorithm>
#include <iterator>
#include <list>

#include "ir/passes/canonical.hpp"
#include "ops/primitive.hpp"

namespace rune::ir {

namespace {

bool small(const Program& program, int v) { return nx::numel(program.types[std::size_t(v)].shape) <= small_elements; }

bool all_small(const Program& program, const Equation& eq) {
  return std::all_of(eq.outputs.begin(), eq.outputs.end(), [&](int v) { return small(program, v); });
}

Program scheduled(const Program& program) {
  Program out = program;
  for (Equation& eq : out.equations)
    for (auto& sub : eq.programs) sub = std::make_shared<Program>(scheduled(*sub));
  // The equations with a large result keep their order, each opening a gap
  // (gap 0: before the first) that holds, in order, the small ones placed
  // right after it. A small primitive goes to the end of the latest gap among
  // its operands' and `floor`'s (the gap of the last equation of small
  // results): never before one of those, so the small ones keep their order,
  // and their order with constructs and checks; any other equation stays
  // where it is, at the end of the last gap. Linear in the equations.
  std::vector<std::vector<Equation>> gaps(1);
  std::vector<std::size_t> gap_of(program.types.size(), 0);  // where each value is defined
  std::size_t floor = 0;
  for (Equation& eq : out.equations) {
    std::size_t gap = gaps.size() - 1;
    if (!all_small(program, eq)) {
      gaps.emplace_back();
      gap = gaps.size() - 1;
    } else {
      if (eq.kind == OpKind::primitive && !eq.outputs.empty()) {
        gap = floor;
        for (int v : eq.inputs) gap = std::max(gap, gap_of[std::size_t(v)]);
      }
      floor = gap;
    }
    for (int v : eq.outputs) gap_of[std::size_t(v)] = gap;
    gaps[gap].push_back(std::move(eq));
  }
  out.equations.clear();
  for (std::vector<Equation>& gap : gaps)
    for (Equation& eq : gap) out.equations.push_back(std::move(eq));
  return out;
}

bool elementwise(const Equation& eq) {
  return eq.kind == OpKind::primitive && eq.outputs.size() == 1 && nx::ops::is_elementwise(eq.prim);
}

// An elementwise primitive of a large result that one equation alone reads,
// a later elementwise primitive of the same shape, moves down to just
// before it (over equations that do not read it; its operands are defined
// before its old place): a pytree's leaves computed one after another
// (`map_leaves`) then used one by one meet their users in one kernel. A
// chain sinks whole: the equations are placed last to first.
Program sunk(const Program& program) {
  Program out = program;
  for (Equation& eq : out.equations)
    for (auto& sub : eq.programs) sub = std::make_shared<Program>(sunk(*sub));
  const std::size_t n = out.equations.size();
  std::vector<int> reads(out.types.size(), 0);
  std::vector<std::size_t> reader(out.types.size(), n);
  for (std::size_t i = 0; i < n; ++i)
    for (int v : out.equations[i].inputs) ++reads[std::size_t(v)], reader[std::size_t(v)] = i;
  for (int v : out.results) reads[std::size_t(v)] += 2;  // (read by the caller)
  std::vector<std::size_t> sinks_to(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!elementwise(out.equations[i])) continue;
    const int v = out.equations[i].outputs[0];
    const std::size_t c = reader[std::size_t(v)];
    if (!small(out, v) && reads[std::size_t(v)] == 1 && c < n && elementwise(out.equations[c]) &&
        out.types[std::size_t(out.equations[c].outputs[0])].shape == out.types[std::size_t(v)].shape)
      sinks_to[i] = c;
  }
  std::list<Equation> order;
  std::vector<std::list<Equation>::iterator> placed(n);
  for (std::size_t i = n; i-- > 0;)
    placed[i] = order.insert(sinks_to[i] < n ? placed[sinks_to[i]] : order.begin(), std::move(out.equations[i]));
  out.equations.assign(std::make_move_iterator(order.begin()), std::make_move_iterator(order.end()));
  return out;
}

}  // namespace

Program schedule_for_fusion(const Program& program) { return canonical(sunk(scheduled(program))); }

}  // namespace rune::ir
