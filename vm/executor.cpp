#include "vm/executor.hpp"

#include <cstdlib>
#include <string_view>

#include "ir/eval.hpp"
#include "ops/trace.hpp"
#include "vm/machine.hpp"

namespace rune::vm {

bool reference_selected() {
  static const bool reference = [] {
    const char* v = std::getenv("RUNE_EXECUTOR");
    return v && std::string_view(v) == "reference";
  }();
  return reference;
}

std::vector<nx::Tensor> execute(const Code& code, std::span<const nx::Tensor> args) {
  bool concrete = nx::ops::trace_depth() == 0 && !reference_selected();
  for (const nx::Tensor& t : args) concrete = concrete && t.defined() && !t.is_traced();
  if (!concrete) return ir::evaluate(*code.program, args);
  return run(code, args);
}

}  // namespace rune::vm
