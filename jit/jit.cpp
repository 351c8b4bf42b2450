// rune::jit's work below the template: compiling a traced program (the
// passes), executing it (the reference interpreter for now), donation and
// retrace reports.
#include <cstdlib>
#include <iostream>
#include <unordered_set>

#include "ir/eval.hpp"
#include "ir/passes/pipeline.hpp"
#include "ops/concrete.hpp"
#include "rune/detail/compiled.hpp"

namespace rune::detail {

std::shared_ptr<const ir::Program> compile(std::shared_ptr<const ir::Program> traced) {
  return std::make_shared<ir::Program>(ir::simplify(*traced));
}

std::vector<nx::Tensor> execute(const ir::Program& program, std::span<const nx::Tensor> args,
                                std::span<const nx::Tensor> captures) {
  std::vector<nx::Tensor> in(args.begin(), args.end());
  in.insert(in.end(), captures.begin(), captures.end());
  std::unordered_set<const nx::detail::Storage*> donated;
  for (const nx::Tensor& t : args)
    if (t.impl()->donated_to_call && t.impl()->storage) donated.insert(t.impl()->storage.get());
  std::vector<nx::Tensor> out = ir::evaluate(program, in);
  if (donated.empty()) return out;
  for (nx::Tensor& t : out)  // a result must outlive the storage it was given
    if (t.impl()->storage && donated.count(t.impl()->storage.get())) {
      nx::Tensor copy = nx::ops::make_tensor(t.dtype(), t.shape());
      nx::ops::copy_elements(*t.impl(), *copy.impl());
      t = copy;
    }
  for (const nx::Tensor& t : args)
    if (t.impl()->donated_to_call && t.impl()->storage) t.impl()->storage->donated.store(true);
  return out;
}

void report_retrace(const TreeKey& here, const TreeKey& previous) {
  const char* debug = std::getenv("RUNE_JIT_DEBUG");  // read at each retrace: they are rare
  if (!debug || std::atoi(debug) == 0) return;
  if (auto difference = first_difference(here, previous, "here", "in the previous key"))
    std::cerr << "rune::jit: retrace: " << *difference << '\n';
}

}  // namespace rune::detail
