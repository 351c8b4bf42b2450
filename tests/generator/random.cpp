// Generators of nx::random draws: uniform, normal, split and bits from a
// key that is a constant or made from a value of the block (any uint32 [2]
// is a key). Gradient cases take constant keys (central differences would
// see draws from a computed key jump) of small seeds, and draw floats only:
// other operations read keys and draws too, and words near 2^32 would drown
// the differences in rounding.
#include <rune/random.hpp>

#include "generators.hpp"

namespace gen {

namespace {

int key(Builder& b) {
  if (b.gradient()) return b.constant(nx::random::key(std::uint64_t(b.rng.uniform(0, 255))));
  if (b.rng.chance(0.5)) return b.constant(nx::random::key(b.rng.next()));
  return b.provide(Type{nx::uint32, {2}});
}

bool draw(Builder& b) {
  Op op = make_op(Kind::random, {key(b)});
  op.fn = int(b.rng.uniform(0, b.gradient() ? 1 : 3));
  op.shape = b.random_shape(3);
  static const std::vector<nx::DType> floats = {nx::float64, nx::float32, nx::float16, nx::bfloat16};
  op.dtype = b.gradient() ? nx::float64 : b.rng.pick(floats);
  op.value = b.rng.chance(0.5) ? 0. : double(b.rng.uniform(-3, 0));
  op.upper = op.value + double(b.rng.uniform(1, 4));
  Type out{op.dtype, op.shape};
  if (op.fn == int(RandomFn::split)) {
    op.axis = b.rng.uniform(0, 3);
    out = Type{nx::uint32, {op.axis, 2}};
  }
  if (op.fn == int(RandomFn::bits)) out.dtype = nx::uint32;
  b.emit(std::move(op), out);
  return true;
}

const Generator generators[] = {{"random", 2, draw}};

}  // namespace

std::span<const Generator> random_generators() { return generators; }

}  // namespace gen
