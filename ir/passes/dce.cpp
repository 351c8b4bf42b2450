#include "ir/passes/dce.hpp"

#include "ir/construct.hpp"
#include "ir/passes/canonical.hpp"

namespace rune::ir {

namespace {
// Walks backward from the results, keeping what they need.
Program without_dead(const Program& program) {
  std::vector<bool> live(program.types.size(), false);
  for (int v : program.results) live[std::size_t(v)] = true;
  std::vector<Equation> kept;
  for (auto eq = program.equations.rbegin(); eq != program.equations.rend(); ++eq) {
    bool used = has_effect(*eq);
    for (int v : eq->outputs) used = used || live[std::size_t(v)];
    if (!used) continue;
    for (int v : eq->inputs) live[std::size_t(v)] = true;
    Equation copy = *eq;
    for (auto& sub : copy.programs) sub = std::make_shared<Program>(without_dead(*sub));
    kept.push_back(std::move(copy));
  }
  Program out = program;
  out.equations.assign(kept.rbegin(), kept.rend());
  return out;
}
}  // namespace

Program eliminate_dead_code(const Program& program) { return canonical(without_dead(program)); }

}  // namespace rune::ir
