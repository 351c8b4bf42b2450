// The collectives of rune/collectives.hpp: over a map's lanes, written with
// rune::lanes (the gather the map named in it computes) and nx functions;
// over the ranks of an MPI job, the ranks primitives (ops/family_ranks.cpp).
#include "rune/collectives.hpp"

#include <map>
#include <string>
#include <vector>

#include "batch/batch_trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/primitive.hpp"
#include "ops/type_checks.hpp"
#include "ops/world.hpp"
#include "rune/nx.hpp"

namespace rune {

namespace {
using nx::ops::Prim;

std::int64_t lanes_of(std::string_view api, Axis a) {
  return a == ranks() ? nx::ops::world::size() : batch::named_map(api, a.id).lanes();
}

void check_lane(std::string_view api, std::string_view what, std::int64_t lane, Axis a) {
  const std::int64_t lanes = lanes_of(api, a);
  if (lane >= 0 && lane < lanes) return;
  if (a == ranks())
    nx::ops::fail(api, std::string(what == "lane" ? "rank" : what) + " " + std::to_string(lane) +
                           " is outside a world of " + std::to_string(lanes) + (lanes == 1 ? " rank" : " ranks"));
  nx::ops::fail(api, std::string(what) + " " + std::to_string(lane) + " is outside an axis of " +
                         std::to_string(lanes) + " lanes");
}
}  // namespace

nx::Tensor psum(Axis a, nx::Operand x) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::psum");
  if (a == ranks()) {  // (in nx::sum's dtype: small integers add up in int64)
    const nx::DType to = nx::ops::accumulation_dtype(x.dtype());
    return nx::ops::bind(Prim::ranks_sum, {to == x.dtype() ? x.tensor() : nx::cast(x, to)}, {});
  }
  return nx::sum(lanes(a, x), {0});
}

nx::Tensor pmean(Axis a, nx::Operand x) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::pmean");
  return psum(a, x) / double(lanes_of("rune::pmean", a));
}

nx::Tensor all_gather(Axis a, nx::Operand x) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::all_gather");
  return lanes(a, x);
}

nx::Tensor ppermute(Axis a, nx::Operand x, std::span<const std::pair<std::int64_t, std::int64_t>> pairs) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::ppermute");
  if (a == ranks()) {  // (its type rule checks the pairs)
    nx::ops::Params params;
    for (const auto& [source, receiver] : pairs) {
      params.starts.push_back(source);
      params.stops.push_back(receiver);
    }
    return nx::ops::bind(Prim::ranks_permute, {x}, params);
  }
  const std::int64_t n = lanes_of("rune::ppermute", a);
  // Each receiver's sender; lane n (a row of zeros below) for the others.
  nx::Tensor sender = nx::full(nx::int64, {n}, double(n));
  std::int64_t* from = nx::ops::data_of<std::int64_t>(sender);
  for (const auto& [source, receiver] : pairs) {
    check_lane("rune::ppermute", "lane", source, a);
    check_lane("rune::ppermute", "lane", receiver, a);
    if (from[receiver] != n)
      nx::ops::fail("rune::ppermute", "lane " + std::to_string(receiver) + " is named twice as a receiver");
    from[receiver] = source;
  }
  const nx::Tensor every = lanes(a, x);
  nx::Shape one_row = every.shape();
  one_row[0] = 1;
  const nx::Tensor with_zeros = nx::concatenate({every, nx::zeros(every.dtype(), one_row)});
  return nx::take(with_zeros, nx::take(sender, lane_index(a)));
}

// (Over the ranks, every rank's x is gathered and the root's row kept: the
// root's value alone would do, at the cost of a transpose of its own.)
nx::Tensor broadcast_from(Axis a, nx::Operand x, std::int64_t root) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::broadcast_from");
  check_lane("rune::broadcast_from", "root", root, a);
  return nx::get(lanes(a, x), root);
}

namespace detail {
// A leaf of at least this many bytes is summed alone: its exchange is
// bandwidth-bound, and laying it end to end with the others would copy it
// twice (as Horovod fuses only tensors below its fusion threshold).
constexpr std::size_t fused_leaf_bytes = 64 * 1024;

std::vector<nx::Tensor> psum_leaves_over_ranks(const char* api, std::span<const nx::Tensor> leaves) {
  const nx::ops::EntryPoint entry(api);
  std::vector<nx::Tensor> out(leaves.size());
  std::map<nx::DType, std::vector<std::size_t>> by_dtype;  // the small leaves (in leaf order within each)
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (std::size_t(leaves[i].numel()) * nx::size_of(leaves[i].dtype()) >= fused_leaf_bytes)
      out[i] = psum(ranks(), leaves[i]);
    else
      by_dtype[leaves[i].dtype()].push_back(i);
  }
  for (const auto& [dtype, members] : by_dtype) {
    std::vector<nx::Tensor> flat;
    for (std::size_t i : members) flat.push_back(nx::reshape(leaves[i], {-1}));
    const nx::Tensor sum = psum(ranks(), flat.size() == 1 ? flat[0] : nx::concatenate(flat));
    std::int64_t at = 0;
    for (std::size_t i : members) {
      const std::int64_t n = leaves[i].numel();
      out[i] = nx::reshape(nx::slice(sum, {at}, {at + n}), leaves[i].shape());
      at += n;
    }
  }
  return out;
}
}  // namespace detail

}  // namespace rune
