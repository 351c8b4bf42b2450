// NaN hunting (rune::debug_nans, RUNE_DEBUG_NANS=1): while on, every
// primitive's eager result is checked (apply_eager), and the VM checks what
// its scalar instructions and kernels make (vm/nan_hunt.cpp). Off, the one
// cost is a relaxed load per eager primitive.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rune/detail/call_site.hpp"
#include "rune/tensor.hpp"

namespace nx::ops {

// What a hunt raises: its text grows with the places it passes through (a
// scan's row, an iterate's trip) on its way out.
class NonFiniteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline std::atomic<bool> nan_hunt{false};
// Set while a map checks its lanes' results itself (NanHuntByLane).
inline thread_local bool nan_hunt_by_lane = false;
inline bool hunting_nans() { return nan_hunt.load(std::memory_order_relaxed) && !nan_hunt_by_lane; }

// While it lives (when `by_lane`), the primitives this thread runs are not
// checked one by one: the map running them checks its result by lane
// (check_lanes_made_finite), to name the lane.
class NanHuntByLane {
 public:
  explicit NanHuntByLane(bool by_lane) noexcept : outer_(nan_hunt_by_lane) { nan_hunt_by_lane = outer_ || by_lane; }
  ~NanHuntByLane() { nan_hunt_by_lane = outer_; }
  NanHuntByLane(const NanHuntByLane&) = delete;
  NanHuntByLane& operator=(const NanHuntByLane&) = delete;

 private:
  bool outer_;
};

// The index of t's first element that is a NaN or an infinity, or -1
// (integers and booleans are always finite).
std::int64_t first_non_finite(const Tensor& t);

// Whether `value` holds a NaN or an infinity that `operands` (all finite)
// did not: the first such element's index, else -1.
std::int64_t first_made_non_finite(std::span<const Tensor> operands, const Tensor& value);

// Throws the hunt's error: "rune::debug_nans: <what> at <site> made nan from
// finite operands (element 3 of its float64 [5] result)" (site: where the
// primitive was called, "cloth.hpp:88"; left out when unknown).
[[noreturn]] void raise_non_finite(std::string_view what, const Tensor& value, std::int64_t element,
                                   rune::detail::CallSite site);

// The same of a value holding lanes of a map along axis 0, `lanes` of them
// from lane `first`: the lane's value and its element are named, then ",
// in lane 2 of rune::vmap".
[[noreturn]] void raise_non_finite_in_lane(std::string_view what, const Tensor& value, std::int64_t element,
                                           rune::detail::CallSite site, std::int64_t first, std::int64_t lanes);

// The eager check of primitive `api`'s result.
void check_made_finite(std::string_view api, std::span<const Tensor> operands, const Tensor& result);
// The same of a map's result, lanes along axis 0: "..., in lane 2 of
// rune::vmap", the element counted in the lane's value.
void check_lanes_made_finite(std::string_view api, std::span<const Tensor> operands, const Tensor& result);

// e again, with ", <where>" added ("in row 612 of a scan").
[[noreturn]] void rethrow_non_finite(const NonFiniteError& e, const std::string& where);

}  // namespace nx::ops
