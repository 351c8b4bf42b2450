// The generators of operations, one per kind of operation, by family. Each
// adds one operation to the builder's block, or returns false when the
// block has no fitting operand (the builder then draws another).
#pragma once

#include <span>
#include <string_view>

#include "builder.hpp"

namespace gen {

struct Generator {
  std::string_view name;
  int weight;
  bool (*emit)(Builder&);
};

std::span<const Generator> elementwise_generators();
std::span<const Generator> shape_generators();
std::span<const Generator> indexing_generators();
std::span<const Generator> linalg_generators();
std::span<const Generator> random_generators();
std::span<const Generator> scan_generators();
std::span<const Generator> construct_generators();

}  // namespace gen
