#include "ir/passes/pipeline.hpp"

#include <cstdlib>
#include <iostream>

#include "ir/passes/cse.hpp"
#include "ir/passes/dce.hpp"
#include "ir/passes/fold.hpp"
#include "ir/passes/hoist.hpp"
#include "ir/passes/schedule.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"

namespace rune::ir {

namespace {
bool flag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::atoi(v) != 0;
}

template <class Pass> Program stage(const char* name, const Pass& pass, const Program& in) {
  Program out = pass(in);
  if (verifying()) verify(out);
  static const bool log = flag("RUNE_LOG_PASSES");
  if (log) std::cerr << "rune: after " << name << ":\n" << print(out);
  return out;
}
}  // namespace

Program simplify(const Program& program) {
  // (folding first: a value of constants alone is no loop's to hoist)
  Program p = stage("fold", fold_constants, program);
  p = stage("cse", eliminate_common_subexpressions, p);
  return stage("dce", eliminate_dead_code, p);
}

Program simplify_loops(const Program& simplified, std::int64_t scalar_elements) {
  // (scalarizing first: the parts of a loop's captures are then hoisted;
  // CSE after hoisting merges what two loops hoisted alike; the order for
  // the VM's kernels last)
  auto scalarize = [&](const Program& in) { return scalarize_small_values(in, scalar_elements); };
  Program p = stage("scalarize", scalarize, simplified);
  p = stage("hoist", hoist_loop_invariants, p);
  p = stage("cse", eliminate_common_subexpressions, p);
  p = stage("dce", eliminate_dead_code, p);
  return stage("schedule", schedule_for_fusion, p);
}

}  // namespace rune::ir
