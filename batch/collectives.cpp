// The collectives of rune/collectives.hpp, written with rune::lanes (the
// gather the map named in it computes) and nx functions.
#include "rune/collectives.hpp"

#include <string>
#include <vector>

#include "batch/batch_trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace rune {

namespace {
std::int64_t lanes_of(std::string_view api, Axis a) { return batch::named_map(api, a.id).lanes(); }

void check_lane(std::string_view api, std::string_view what, std::int64_t lane, std::int64_t lanes) {
  if (lane < 0 || lane >= lanes)
    nx::ops::fail(api, std::string(what) + " " + std::to_string(lane) + " is outside an axis of " +
                           std::to_string(lanes) + " lanes");
}
}  // namespace

nx::Tensor psum(Axis a, nx::Operand x) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::psum");
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
  const std::int64_t n = lanes_of("rune::ppermute", a);
  // Each receiver's sender; lane n (a row of zeros below) for the others.
  nx::Tensor sender = nx::full(nx::int64, {n}, double(n));
  std::int64_t* from = nx::ops::data_of<std::int64_t>(sender);
  for (const auto& [source, receiver] : pairs) {
    check_lane("rune::ppermute", "lane", source, n);
    check_lane("rune::ppermute", "lane", receiver, n);
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

nx::Tensor broadcast_from(Axis a, nx::Operand x, std::int64_t root) {
  const nx::detail::Calling here(x.site());
  const nx::ops::EntryPoint entry("rune::broadcast_from");
  check_lane("rune::broadcast_from", "root", root, lanes_of("rune::broadcast_from", a));
  return nx::get(lanes(a, x), root);
}

}  // namespace rune
