// The batch trace (rune::vmap): its values are one lane's view of a value
// computed for every lane at once. A tracer holds the whole value, lanes
// along axis 0; its handle shows the type of one lane, so type rules and
// user code see a lane. Primitives go through their batching rules
// (ops/batching.cpp); constructs run lane by lane.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "ir/trace.hpp"

namespace rune::batch {

class BatchTrace final : public ir::Trace {
 public:
  // `axis`: the map's name (rune::Axis's id), 0 for a map without one.
  BatchTrace(std::string_view entry_point, std::int64_t lanes, std::uint64_t axis);
  std::int64_t lanes() const { return lanes_; }
  std::uint64_t axis() const { return axis_; }

  // A value of this trace from every lane's values along axis 0.
  nx::Tensor wrap(const nx::Tensor& all_lanes);
  // Every lane's value along axis 0, and whether it is batched (a value this
  // trace does not own is the same in every lane and given back as it is).
  nx::Tensor lanes_of(const nx::Tensor& t, bool* batched) const;
  // Every lane's value along axis 0, an unbatched value broadcast.
  nx::Tensor stacked(const nx::Tensor& t) const;

  // A rune::Total collected inside this map: each lane has its own total, so
  // adds to it keep their lanes (others are summed over the lanes).
  void collect_per_lane(std::uint64_t total) { per_lane_totals_.push_back(total); }
  bool collects_per_lane(std::uint64_t total) const {
    return std::find(per_lane_totals_.begin(), per_lane_totals_.end(), total) != per_lane_totals_.end();
  }

  // The lanes that run what this map computes (a bool per lane, a value
  // below this map; undefined: every lane). The others compute a donor
  // lane's values in their place, whose results are dropped (the lanes of a
  // cond that take another branch, an iterate's stopped lanes): their
  // effects (checks, callbacks, adds to totals) do not run, an iterate
  // counts them stopped, and rune::lanes on this map throws
  // std::invalid_argument "rune::lanes: <why>" while one does not run (it
  // has no value of its own to gather).
  const nx::Tensor& running() const { return running_; }
  // From now on only `lanes` (a bool per lane) of the lanes running run.
  void run_only(const nx::Tensor& lanes, std::string why);
  // This map traces a construct's sub-program for `map` (the same lanes): it
  // keeps map's totals collected per lane and its lanes running.
  void continue_from(const BatchTrace& map);

  bool runs_map(std::uint64_t axis) const override { return axis != 0 && axis == axis_; }
  bool maps_lanes() const override { return !computing_all_lanes_; }

  nx::Tensor process(ir::Prim p, std::span<const nx::Tensor> operands, const ir::Params& params,
                     const ir::TensorType& type) override;
  std::vector<nx::Tensor> process_construct(const ir::Equation& eq, std::span<const nx::Tensor> inputs) override;

 private:
  std::int64_t lanes_;
  std::uint64_t axis_;
  std::vector<std::uint64_t> per_lane_totals_;
  nx::Tensor running_;
  bool computing_all_lanes_ = false;  // (a construct's batching rule runs)
  std::string gathering_refused_;

  nx::Tensor collective(ir::Prim p, const nx::Tensor& operand, const ir::Params& params);
  std::vector<nx::Tensor> if_running(const ir::Equation& eq, std::span<const nx::Tensor> lane, std::int64_t i);
};

// The innermost map of this thread's traces named `axis` (any map for 0),
// or null outside such a map.
BatchTrace* innermost_map(std::uint64_t axis);
// The innermost map named `axis` (not 0); throws `api`'s error outside one.
BatchTrace& named_map(std::string_view api, std::uint64_t axis);

}  // namespace rune::batch
