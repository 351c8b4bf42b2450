#include "ir/passes/canonical.hpp"

#include <unordered_map>

namespace rune::ir {

Program canonical(const Program& program) {
  Program out;
  std::unordered_map<int, int> renamed;
  auto define = [&](int v) { return renamed[v] = out.add_value(program.types[std::size_t(v)]); };
  for (int v : program.params) out.params.push_back(define(v));
  for (const Equation& eq : program.equations) {
    Equation copy = eq;
    for (int& v : copy.inputs) v = renamed.at(v);
    for (int& v : copy.outputs) v = define(v);
    for (auto& sub : copy.programs) sub = std::make_shared<Program>(canonical(*sub));
    out.equations.push_back(std::move(copy));
  }
  for (int v : program.results) out.results.push_back(renamed.at(v));
  return out;
}

}  // namespace rune::ir
