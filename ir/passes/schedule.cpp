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

}  // namespace

Program schedule_for_fusion(const Program& program) { return canonical(scheduled(program)); }

}  // namespace rune::ir
