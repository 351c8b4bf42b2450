// The generators of the constructs besides scan: rune::iterate, rune::cond,
// rune::switch_, rune::remat, and rune::collect with the adds to its total.
// Their functions are blocks generated like any (so they may hold
// constructs themselves: two levels at most), reading values of the
// enclosing block as captures.
#include <algorithm>
#include <string>

#include "generators.hpp"
#include "values.hpp"

namespace gen {

std::shared_ptr<const Block> sub_block(Builder& b, std::vector<Type> params,
                                       const std::function<void(Builder&, Block&)>& fill) {
  auto block = std::make_shared<Block>();
  block->types = std::move(params);
  block->params = int(block->types.size());
  Builder inner = b.nested(*block);
  fill(inner, *block);
  return block;
}

// In a construct's function half as often as at the top: each level
// multiplies the cost of a case.
bool room(Builder& b) { return b.depth < max_depth && (b.depth == 0 || b.rng.chance(0.5)); }

std::vector<Type> types_of(const Builder& b, std::span<const int> values) {
  std::vector<Type> out;
  for (int v : values) out.push_back(b.type(v));
  return out;
}

void add_captures(Builder& b, Op& op, int least, int most) {
  for (std::int64_t i = b.rng.uniform(least, most); i > 0; --i) op.in.push_back(b.pick_any());
}

std::vector<int> some_unread(const Builder& b) {
  std::vector<int> out = b.unread();
  if (out.size() > 2) out.erase(out.begin(), out.end() - 2);
  return out;
}

namespace {

// ---- iterate

// A carry of one or two values of the block and an int32 counter (last),
// which the step increments: until is `counter >= k` (k: the start plus at
// most max steps), or'd sometimes with a predicate of a carried value (so
// the loop may stop sooner). Rarely k lies beyond max: until is still false
// after max steps, and every route must throw the API's error.
bool iterate(Builder& b) {
  if (!room(b)) return false;
  const bool exceed = !b.gradient() && b.depth == 0 && !b.c.error && b.rng.chance(0.06);
  Op op = make_op(Kind::iterate, {});
  for (std::int64_t i = b.rng.uniform(1, 2); i > 0; --i) op.in.push_back(b.pick_any());
  const std::int64_t start = b.rng.uniform(0, 2);
  op.in.push_back(b.constant(nx::scalar(nx::int32, double(start))));
  op.carries = int(op.in.size());
  op.max = b.rng.uniform(0, 3);
  const std::int64_t stop_at = start + (exceed ? op.max + b.rng.uniform(1, 2) : b.rng.uniform(0, op.max));
  const bool early = !exceed && b.rng.chance(0.6);
  if (early && b.rng.chance(0.4)) op.in.push_back(b.pick_any());  // a threshold, captured by until
  op.xs = int(op.in.size()) - op.carries;
  add_captures(b, op, 0, 2);  // the step's

  const std::vector<Type> carry = types_of(b, std::span<const int>(op.in).first(std::size_t(op.carries)));
  const int counter = op.carries - 1;
  std::vector<Type> until_params = carry;
  if (op.xs) until_params.push_back(b.type(op.in[std::size_t(op.carries)]));
  auto until = sub_block(b, until_params, [&](Builder& inner, Block& block) {
    int stop = inner.call_scalar("greater_equal", counter, double(stop_at));
    if (early) {
      const int v = int(inner.rng.uniform(0, counter - 1));
      stop = inner.call_binary("logical_or", stop, inner.predicate(v, op.xs ? op.carries : -1));
    }
    block.results = {stop};
  });
  std::vector<Type> step_params = carry;
  for (std::size_t i = std::size_t(op.carries + op.xs); i < op.in.size(); ++i) step_params.push_back(b.type(op.in[i]));
  auto step = sub_block(b, step_params, [&](Builder& inner, Block& block) {
    inner.grow(int(inner.rng.uniform(1, 3)));
    for (int i = 0; i < counter; ++i) block.results.push_back(inner.provide(carry[std::size_t(i)]));
    block.results.push_back(inner.call_scalar("add", counter, 1));
  });
  op.blocks = {until, step};
  if (exceed)
    b.c.error = "rune::iterate: until is still false after max = " + std::to_string(op.max) + " steps";
  b.emit(std::move(op), carry);
  return true;
}

// ---- cond and switch_

// The branches: the first makes what it makes, the others values of the
// same types from the same captures.
void add_branches(Builder& b, Op& op, std::int64_t count) {
  add_captures(b, op, 1, 2);
  const std::vector<Type> captures = types_of(b, std::span<const int>(op.in).subspan(1));
  std::vector<Type> outs;
  for (std::int64_t k = 0; k < count; ++k)
    op.blocks.push_back(sub_block(b, captures, [&](Builder& inner, Block& block) {
      if (k == 0) {
        inner.grow(int(inner.rng.uniform(1, 3)));
        block.results = some_unread(inner);
        for (int r : block.results) outs.push_back(inner.type(r));
      } else {
        inner.grow(int(inner.rng.uniform(0, 3)));
        for (const Type& t : outs) block.results.push_back(inner.provide(t));
      }
    }));
  b.emit(std::move(op), outs);
}

// pred: a comparison of a reduction with a threshold, or any/all of a bool.
bool cond(Builder& b) {
  if (!room(b)) return false;
  Op op = make_op(Kind::cond, {b.predicate(b.pick_any())});
  add_branches(b, op, 2);
  return true;
}

// The index: a constant, or a reduction cast to an integer (int32 mostly,
// other integer dtypes too), sometimes out of range (it is clamped).
int switch_index(Builder& b, std::int64_t branches) {
  if (b.rng.chance(0.3)) return b.constant(nx::scalar(nx::int32, double(b.rng.uniform(-2, branches + 1))));
  int v = b.pick([](const Type& t) { return !nx::is_complex(t.dtype); });
  if (v < 0) v = b.pick_any();
  static const std::vector<nx::DType> dtypes = {nx::int32, nx::int32, nx::int32, nx::int64, nx::uint8, nx::int16};
  const nx::DType dtype = b.rng.pick(dtypes);
  int index = b.cast(b.reduction(v), dtype);
  if (b.rng.chance(0.4)) index = b.call_scalar("add", index, double(b.rng.uniform(1, 2)));
  return index;
}

bool switch_(Builder& b) {
  if (!room(b)) return false;
  const std::int64_t count = b.rng.uniform(1, 4);
  Op op = make_op(Kind::switch_, {switch_index(b, count)});
  add_branches(b, op, count);
  return true;
}

// ---- remat

bool remat(Builder& b) {
  if (!room(b)) return false;
  Op op = make_op(Kind::remat, {});
  add_captures(b, op, 1, 2);  // (its arguments)
  op.carries = int(op.in.size());
  add_captures(b, op, 0, 2);
  std::vector<Type> outs;
  op.blocks = {sub_block(b, types_of(b, op.in), [&](Builder& inner, Block& block) {
    inner.grow(int(inner.rng.uniform(1, 3)));
    block.results = some_unread(inner);
    for (int r : block.results) outs.push_back(inner.type(r));
  })};
  b.emit(std::move(op), outs);
  return true;
}

// ---- collect and total_add

}  // namespace

// In gradient cases what is added takes integer steps (a reduction of an
// int32 cast): the total has no derivative, so central differences must see none.
void add_to_total(Builder& b, std::size_t which, int value) {
  int v = value >= 0 ? value : b.pick_any();
  if (b.gradient()) v = b.cast(v, nx::int32);
  Op op = make_op(Kind::total_add, {b.fit(b.reduction(v), b.totals[which])});
  op.axis = std::int64_t(which);
  b.emit(std::move(op), std::span<const Type>());
}

namespace {

bool total_add(Builder& b) {
  if (b.totals.empty()) return false;
  add_to_total(b, std::size_t(b.rng.uniform(0, std::int64_t(b.totals.size()) - 1)));
  return true;
}

// The zero: a value of the block or a constant (in gradient cases a float64
// constant: a zero that depends on the arguments would pass them into the
// total, which has no derivative). Never bool: a bool sum is no total.
int zero_of(Builder& b) {
  if (!b.gradient() && b.rng.chance(0.4)) {
    const int v = b.pick([](const Type& t) { return t.dtype != nx::bool_; });
    if (v >= 0) return v;
  }
  Type t{b.gradient() ? nx::float64 : b.random_dtype(), b.random_shape(1)};
  if (t.dtype == nx::bool_) t.dtype = nx::int32;
  return b.constant(random_tensor(b.rng, t, b.gradient()));
}

bool collect(Builder& b) {
  if (!room(b)) return false;
  Op op = make_op(Kind::collect, {zero_of(b)});
  add_captures(b, op, 1, 2);
  const Type total = b.type(op.in[0]);
  std::vector<Type> outs;
  op.blocks = {sub_block(b, types_of(b, std::span<const int>(op.in).subspan(1)), [&](Builder& inner, Block& block) {
    inner.totals.push_back(total);
    for (std::int64_t k = b.rng.uniform(1, 3); k > 0; --k) {
      inner.grow(int(inner.rng.uniform(0, 2)));
      add_to_total(inner, inner.totals.size() - 1);
    }
    inner.grow(int(inner.rng.uniform(0, 2)));
    block.results = some_unread(inner);
    for (int r : block.results) outs.push_back(inner.type(r));
  })};
  outs.push_back(total);
  b.emit(std::move(op), outs);
  return true;
}

const Generator generators[] = {
    {"iterate", 1, iterate}, {"cond", 1, cond},       {"switch_", 1, switch_},
    {"remat", 1, remat},     {"collect", 1, collect}, {"total_add", 2, total_add},
};

}  // namespace

std::span<const Generator> construct_generators() { return generators; }

}  // namespace gen
