// rune::vmap below its template: the lane count, and a map in progress.
#include <optional>

#include "batch/batch_trace.hpp"
#include "ops/errors.hpp"
#include "rune/detail/mapping.hpp"
#include "rune/nx.hpp"

namespace rune::detail {

std::int64_t lane_count_of(std::span<const std::string> paths, std::span<const nx::Tensor> leaves) {
  if (leaves.empty()) nx::ops::fail("rune::vmap", "the arguments hold no tensor to map over");
  for (std::size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i].ndim() == 0) nx::ops::fail("rune::vmap", paths[i] + ": a scalar has no axis 0 to map over");
  const std::int64_t lanes = leaves[0].shape()[0];
  for (std::size_t i = 1; i < leaves.size(); ++i)
    if (leaves[i].shape()[0] != lanes)
      nx::ops::fail("rune::vmap", paths[i] + ": " + std::to_string(leaves[i].shape()[0]) + " rows along axis 0, " +
                                      paths[0] + ": " + std::to_string(lanes));
  return lanes;
}

struct Mapping::State {
  batch::BatchTrace trace;
  std::optional<nx::ops::TraceScope> scope;
  State(std::string_view entry, std::int64_t lanes) : trace(entry, lanes) { scope.emplace(trace); }
};

Mapping::Mapping(std::string_view entry_point, std::int64_t lanes)
    : state_(std::make_unique<State>(entry_point, lanes)) {}
Mapping::~Mapping() = default;

std::vector<nx::Tensor> Mapping::inputs(std::span<const nx::Tensor> leaves) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : leaves) out.push_back(state_->trace.wrap(t));
  return out;
}

std::vector<nx::Tensor> Mapping::finish(std::span<const nx::Tensor> outputs) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : outputs) out.push_back(state_->trace.stacked(t));
  state_->scope.reset();
  return out;
}

}  // namespace rune::detail
