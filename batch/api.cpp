// rune::vmap below its template: the lane count, and a map in progress.
#include <atomic>
#include <optional>

#include "batch/batch_trace.hpp"
#include "ops/errors.hpp"
#include "ops/type_checks.hpp"
#include "ops/world.hpp"
#include "rune/nx.hpp"
#include "rune/vmap.hpp"

namespace rune::detail {

std::uint64_t fresh_axis() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}

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
  State(std::string_view entry, std::int64_t lanes, std::uint64_t axis) : trace(entry, lanes, axis) {
    scope.emplace(trace);
  }
};

Mapping::Mapping(std::string_view entry_point, std::int64_t lanes, std::uint64_t axis) {
  if (axis == ranks().id) nx::ops::fail(entry_point, "rune::ranks() names the processes of the job, not a map");
  state_ = std::make_unique<State>(entry_point, lanes, axis);
}
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

namespace rune {

namespace {
nx::Tensor index_in(batch::BatchTrace* map) {
  if (!map) return nx::scalar(nx::int32, 0);
  return map->wrap(nx::arange(nx::int32, 0, double(map->lanes())));
}
}  // namespace

// A collective the map named `a` computes (ops/family_collective.cpp),
// whatever traces its operand: recorded in a construct's sub-program or a
// compiled function inside the map, differentiated inside it.
// Over the ranks, the gather of every process's x (ops/family_ranks.cpp).
nx::Tensor lanes(Axis a, nx::Operand x) {
  const nx::detail::Calling here(x.site());
  nx::ops::check_defined("rune::lanes", std::span<const nx::Tensor>(&x.tensor(), 1));
  nx::ops::Params params;
  if (a == ranks()) {
    params.shape = {nx::ops::world::size()};
    return nx::ops::bind(nx::ops::Prim::ranks_gather, {x}, params);
  }
  params.axis = std::int64_t(a.id);
  params.shape = {batch::named_map("rune::lanes", a.id).lanes()};
  return nx::ops::bind(nx::ops::Prim::lanes_gather, {x}, params);
}

nx::Tensor lane_index() { return index_in(batch::innermost_map(0)); }
// (Over the ranks a primitive, recorded where traced: a compiled or saved
// program reads the rank of the process that runs it.)
nx::Tensor lane_index(Axis a) {
  if (a == ranks()) return nx::ops::bind(nx::ops::Prim::ranks_index, {nx::scalar(nx::int32, 0)}, {});
  return index_in(batch::innermost_map(a.id));
}

std::int64_t lane_count() {
  batch::BatchTrace* map = batch::innermost_map(0);
  return map ? map->lanes() : 1;
}
std::int64_t lane_count(Axis a) {
  if (a == ranks()) return nx::ops::world::size();
  batch::BatchTrace* map = batch::innermost_map(a.id);
  return map ? map->lanes() : 1;
}

}  // namespace rune
