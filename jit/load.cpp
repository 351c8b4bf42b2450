// rune::load's checks of the declared structures against a saved program's
// parameters and results (include/rune/load.hpp).
#include "ir/program.hpp"
#include "ops/errors.hpp"
#include "rune/load.hpp"

namespace rune::detail {

void check_leaf_paths(const Program& program, bool results, std::span<const std::string> declared) {
  const std::size_t count = results ? program.ir().results.size() : program.ir().params.size();
  const std::string noun = results ? "result" : "argument";
  if (declared.size() != count) {
    auto leaves = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " tensor leaf" : " tensor leaves"); };
    nx::ops::fail("rune::load", "the declared " + noun + (results ? " has " : "s have ") + leaves(declared.size()) +
                                    ", the saved program " + (results ? "returns " : "takes ") +
                                    std::to_string(count));
  }
  if (!program.named()) return;
  const std::span<const std::string> saved = results ? program.result_names() : program.param_names();
  for (std::size_t k = 0; k < count; ++k)
    if (declared[k] != saved[k])
      nx::ops::fail("rune::load", noun + " " + std::to_string(k) + " is " + path_name(declared[k]) +
                                      " in the declared type, " + path_name(saved[k]) + " in the saved program");
}

}  // namespace rune::detail
