#include "ir/passes/schedule.hpp"

#include <algorithm>

#include "ir/passes/canonical.hpp"

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
  // where[v]: the position in `order` after which v is defined (0: before
  // every equation, as parameters are). A small primitive moves up over
  // the equations with large results only: none goes before `floor`, the
  // place after the last equation of small results (so they keep their
  // order, and their order with constructs and checks).
  std::vector<std::size_t> where(program.types.size(), 0);
  std::vector<Equation> order;
  order.reserve(out.equations.size());
  std::size_t floor = 0;
  for (Equation& eq : out.equations) {
    std::size_t at = order.size();
    if (all_small(program, eq)) {
      if (eq.kind == OpKind::primitive && !eq.outputs.empty()) {
        at = floor;
        for (int v : eq.inputs) at = std::max(at, where[std::size_t(v)]);
      }
      floor = at + 1;
    }
    order.insert(order.begin() + long(at), std::move(eq));
    for (std::size_t& w : where)  // (what was after `at` moved down one place)
      if (w > at) ++w;
    for (int v : order[at].outputs) where[std::size_t(v)] = at + 1;
  }
  out.equations = std::move(order);
  return out;
}

}  // namespace

Program schedule_for_fusion(const Program& program) { return canonical(scheduled(program)); }

}  // namespace rune::ir
