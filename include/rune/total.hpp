// rune::Total and rune::collect: write-only sums gathered while a function
// runs (an energy, a count of contacts), whatever transformations it runs
// under.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <utility>
#include <vector>

#include "rune/detail/located.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {
std::uint64_t fresh_total();
// An add to the total `id`: into the innermost collect of that total that
// is open when it executes; none open: nothing.
void add_to_total(std::uint64_t id, const nx::Tensor& value);
// A collect of the total `id` around `body` (see ir/program.hpp): its
// outputs are the body's results, then the total.
std::vector<nx::Tensor> bind_collect(std::uint64_t id, std::shared_ptr<const ir::Program> body,
                                     std::span<const nx::Tensor> inputs);
// Runs f eagerly with a collect of `id` open; gives the total.
nx::Tensor collect_eagerly(std::uint64_t id, const nx::Tensor& zero, const std::function<void()>& f);
}  // namespace detail

// A write-only sum. t.add(v) adds v to the total of the innermost
// rune::collect(t, ...) running; with none running it does nothing.
class Total {
 public:
  Total() : id_(detail::fresh_total()) {}
  void add(const nx::Tensor& value) const { detail::add_to_total(id_, value); }
  std::uint64_t id() const { return id_; }

 private:
  std::uint64_t id_;
};

// Runs f() and gives its result and zero plus everything added to t while
// it ran: an add counts once per execution (under jit when the compiled
// function runs, never at its trace; in a loop, once per trip); under a map,
// the lanes' adds are summed; a backward pass (grad, a remat's replay) adds
// nothing. The total has no derivative.
template <class F>
auto collect(const Total& t, const nx::Tensor& zero, F f, detail::CallSite where = detail::CallSite::current()) {
  using R = std::decay_t<decltype(f())>;
  if (!detail::tracing(std::span<const nx::Tensor>(&zero, 1))) {
    std::optional<R> result;
    nx::Tensor total = detail::collect_eagerly(t.id(), zero, [&] { result.emplace(f()); });
    return std::pair<R, nx::Tensor>{std::move(*result), total};
  }
  detail::Staging staging("rune::collect");
  const R result = detail::located("the body of rune::collect", where, f);
  auto body = staging.finish(result_leaves("rune::collect", result));
  std::vector<nx::Tensor> inputs{zero};
  inputs.insert(inputs.end(), staging.captures().begin(), staging.captures().end());
  const nx::detail::Placing here(where);  // (the construct's equation is placed at its call)
  std::vector<nx::Tensor> out = detail::bind_collect(t.id(), body, inputs);
  const nx::Tensor total = out.back();
  out.pop_back();
  return std::pair<R, nx::Tensor>{rebuild(result, std::span<const nx::Tensor>(out)), total};
}

}  // namespace rune
