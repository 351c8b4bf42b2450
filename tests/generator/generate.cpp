#include "builder.hpp"
#include "generator.hpp"
#include "values.hpp"

namespace gen {

namespace {

// Every value that no operation reads, so that everything computed is
// compared; gradient cases return float64 only.
void choose_results(Builder& b, Block& block) {
  block.results = b.unread();
  if (b.gradient())
    for (int& r : block.results) r = b.cast(r, nx::float64);
}

}  // namespace

Case generate(std::uint64_t seed) {
  Rng rng(seed);
  Case c;
  c.seed = seed;
  c.gradient = rng.chance(0.35);
  Builder b(rng, c, c.function, 0);
  c.function.params = int(rng.uniform(1, 3));
  for (int i = 0; i < c.function.params; ++i) {
    const Type t{c.gradient ? nx::float64 : b.random_dtype(), b.random_shape(3)};
    c.function.types.push_back(t);
    c.args.push_back(random_tensor(rng, t, c.gradient));
  }
  // Gradient cases take float64 arguments: some go complex at once, so that
  // complex derivatives are exercised as often as real ones.
  if (c.gradient && rng.chance(0.25)) b.cast(b.pick_any(), nx::complex128);
  b.grow(int(rng.uniform(1, 10)));
  choose_results(b, c.function);
  return c;
}

}  // namespace gen
