// rune::vmap: a function of one lane applied to every lane at once.
#pragma once

#include <concepts>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "rune/detail/diagnose.hpp"
#include "rune/detail/mapping.hpp"
#include "rune/tree.hpp"

namespace rune {

// The name of a map, so that code inside nested maps can address one of
// them (rune::lanes, lane_index, lane_count). rune::axis() makes a fresh one.
struct Axis {
  std::uint64_t id = 0;
  bool operator==(const Axis&) const = default;
};
inline Axis axis() { return Axis{detail::fresh_axis()}; }
// The processes of an MPI job (`mpiexec -n P ./prog`) as an axis
// (docs/scale-out.md): lane_index(ranks()) is this process's rank,
// lane_count(ranks()) the job's size (0 and 1 without MPI), and
// rune::lanes and the collectives of rune/collectives.hpp act across the
// processes. No rune::vmap takes this name.
inline Axis ranks() { return Axis{~std::uint64_t(0)}; }

// Every lane's value of x along the map named `a`, stacked on a new axis 0:
// the same value in every lane. Throws outside such a map.
nx::Tensor lanes(Axis a, nx::Operand x);
// The index of the lane running (an int32 scalar) in the innermost map, or
// in the map named `a`; 0 outside maps.
nx::Tensor lane_index();
nx::Tensor lane_index(Axis a);
// The number of lanes of the innermost map, or of the map named `a`; 1
// outside maps.
std::int64_t lane_count();
std::int64_t lane_count(Axis a);

template <class F> class Mapped {
 public:
  explicit Mapped(F f, Axis a = {}) : f_(std::move(f)), axis_(a) {}

  // Maps axis 0 of every tensor leaf of every argument (static leaves stay
  // as they are); the results' lanes are stacked along axis 0.
  template <class... Args>
    requires(detail::Structures<Args...> && std::invocable<const F&, const Args&...>)
  auto operator()(const Args&... args) const {
    std::vector<std::string> paths;
    std::vector<nx::Tensor> all;
    int position = 0;
    auto collect = [&](const std::string& path, const nx::Tensor& t) {
      paths.push_back(path);
      all.push_back(t);
    };
    (for_each_leaf(args, collect, std::to_string(position++)), ...);
    detail::Mapping map("rune::vmap", detail::lane_count_of(paths, all), axis_.id);
    auto lane = [&](const auto& arg) {
      std::vector<nx::Tensor> in = map.inputs(leaves(arg));
      return rebuild(arg, std::span<const nx::Tensor>(in));
    };
    // (a braced list evaluates left to right)
    std::tuple<decltype(lane(args))...> lanes{lane(args)...};
    auto result = std::apply(f_, lanes);
    std::vector<nx::Tensor> out = map.finish(result_leaves("rune::vmap", result));
    return rebuild(result, std::span<const nx::Tensor>(out));
  }
  template <class... Args> auto operator()(const Args&...) const {
    RUNE_DETAIL_DIAGNOSE_CALL("rune::vmap", "an argument is", (std::invocable<const F&, const Args&...>),
                              "the function cannot be called with these arguments", Args...);
    return detail::Misuse{};
  }

 private:
  F f_;
  Axis axis_;
};

// f mapped over axis 0 of every tensor of every argument: each lane runs f's
// computation on its row; values f captures are the same in every lane.
template <class F> Mapped<F> vmap(F f) { return Mapped<F>(std::move(f)); }
// A map named `a`.
template <class F> Mapped<F> vmap(F f, Axis a) { return Mapped<F>(std::move(f), a); }

}  // namespace rune
