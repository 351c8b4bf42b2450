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

  // The lanes that run what this map computes now, a bool per lane
  // (undefined: every lane). Under a map every lane computes every branch of
  // a cond whose index differs per lane, and every trip of an iterate whose
  // lanes stop apart; a lane that computes what it does not run (a branch it
  // did not take, a trip after it stopped) adds nothing to totals.
  const nx::Tensor& running() const { return running_; }
  // From now on only `lanes` (a bool per lane) of the lanes running run.
  void run_only(const nx::Tensor& lanes);
  // While one lives, the map's batching rule computes on its lanes' values
  // again (a branch of a cond whose index differs per lane) for `lanes` of
  // the lanes running.
  class OnlyLanes {
   public:
    OnlyLanes(BatchTrace& map, const nx::Tensor& lanes)
        : map_(map), was_running_(map.running_), was_computing_all_lanes_(map.computing_all_lanes_) {
      map.run_only(lanes);
      map.computing_all_lanes_ = false;
    }
    ~OnlyLanes() {
      map_.running_ = was_running_;
      map_.computing_all_lanes_ = was_computing_all_lanes_;
    }
    OnlyLanes(const OnlyLanes&) = delete;
    OnlyLanes& operator=(const OnlyLanes&) = delete;

   private:
    BatchTrace& map_;
    nx::Tensor was_running_;
    bool was_computing_all_lanes_;
  };
  // This map traces a construct's sub-program for `map` (the same lanes): it
  // keeps map's totals collected per lane and its lanes running.
  void continue_from(const BatchTrace& map);

  bool runs_map(std::uint64_t axis) const override { return axis != 0 && axis == axis_; }
  bool maps_lanes() const override { return !computing_all_lanes_; }
  // rune::lanes on this map is computed with a check that no lane is
  // `stopped` (a bool per lane), which throws std::invalid_argument
  // "rune::lanes: <why>" when one is (an iterate's step, whose stopped lanes
  // take no trip of their own).
  void guard_gathering(nx::Tensor stopped, std::string why) {
    stopped_ = std::move(stopped);
    gathering_refused_ = std::move(why);
  }

  nx::Tensor process(ir::Prim p, std::span<const nx::Tensor> operands, const ir::Params& params,
                     const ir::TensorType& type) override;
  std::vector<nx::Tensor> process_construct(const ir::Equation& eq, std::span<const nx::Tensor> inputs) override;

 private:
  std::int64_t lanes_;
  std::uint64_t axis_;
  std::vector<std::uint64_t> per_lane_totals_;
  nx::Tensor running_;
  bool computing_all_lanes_ = false;  // (a construct's batching rule runs)
  nx::Tensor stopped_;
  std::string gathering_refused_;

  nx::Tensor collective(ir::Prim p, const nx::Tensor& operand, const ir::Params& params);
};

// The innermost map of this thread's traces named `axis` (any map for 0),
// or null outside such a map.
BatchTrace* innermost_map(std::uint64_t axis);

}  // namespace rune::batch
