#include "ir/passes/cse.hpp"

#include <unordered_map>

#include "ir/construct.hpp"
#include "ir/passes/canonical.hpp"

namespace rune::ir {

namespace {

// Two equations compute the same values: equal once their own outputs are
// set aside (equal() of single-equation programs does the comparing).
bool same_computation(const Equation& a, const Equation& b) {
  if (a.kind != b.kind || a.inputs != b.inputs || a.outputs.size() != b.outputs.size()) return false;
  Equation x = a, y = b;
  x.outputs = y.outputs;
  Program pa, pb;
  pa.equations = {x};
  pb.equations = {y};
  return equal(pa, pb);
}

std::size_t fingerprint(const Equation& eq) {
  std::size_t h = std::size_t(eq.kind) * 31 + std::size_t(eq.prim);
  for (int v : eq.inputs) h = h * 1000003 + std::size_t(v);
  return h;
}

Program merged(const Program& program) {
  Program out = program;
  out.equations.clear();
  std::unordered_map<int, int> replaced;
  std::unordered_multimap<std::size_t, std::size_t> seen;  // fingerprint -> index in out.equations
  for (const Equation& original : program.equations) {
    Equation eq = original;
    for (int& v : eq.inputs)
      if (auto r = replaced.find(v); r != replaced.end()) v = r->second;
    for (auto& sub : eq.programs) sub = std::make_shared<Program>(merged(*sub));
    if (has_effect(eq)) {  // (each runs: two adds to a total add twice)
      out.equations.push_back(std::move(eq));
      continue;
    }
    const std::size_t key = fingerprint(eq);
    bool duplicate = false;
    for (auto [it, end] = seen.equal_range(key); it != end && !duplicate; ++it) {
      const Equation& earlier = out.equations[it->second];
      if (!same_computation(earlier, eq)) continue;
      for (std::size_t k = 0; k < eq.outputs.size(); ++k) replaced[eq.outputs[k]] = earlier.outputs[k];
      duplicate = true;
    }
    if (duplicate) continue;
    seen.emplace(key, out.equations.size());
    out.equations.push_back(std::move(eq));
  }
  for (int& v : out.results)
    if (auto r = replaced.find(v); r != replaced.end()) v = r->second;
  return out;
}

}  // namespace

Program eliminate_common_subexpressions(const Program& program) { return canonical(merged(program)); }

}  // namespace rune::ir
