// Generators of joins (concatenate, stack) and of indexing (take,
// scatter_add, segment_sum, the dynamic slices): indices and starts out of
// range (clamped; segment ids dropped), empty axes.
#include "generators.hpp"
#include "values.hpp"

namespace gen {

namespace {

// Values with x's shape off `axis` (any length along it), cast to x's dtype.
std::vector<int> joinable(Builder& b, int x, std::int64_t axis) {
  std::vector<int> parts = {x};
  const nx::Shape shape = b.type(x).shape;
  auto fits = [&](const Type& t) {
    if (t.shape.size() != shape.size()) return false;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (std::int64_t(d) != axis && t.shape[d] != shape[d]) return false;
    return true;
  };
  for (std::int64_t k = b.rng.uniform(0, 2); k > 0; --k) parts.push_back(b.cast(b.pick(fits), b.type(x).dtype));
  return parts;
}

bool concatenate(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty(); });
  if (x < 0) return false;
  const std::int64_t rank = rank_of(b, x), axis = b.rng.uniform(0, rank - 1);
  Op op = make_op(Kind::concatenate, joinable(b, x, axis));
  op.axis = written(b.rng, axis, rank);
  Type out = b.type(x);
  out.shape[std::size_t(axis)] = 0;
  for (int v : op.in) out.shape[std::size_t(axis)] += b.type(v).shape[std::size_t(axis)];
  b.emit(std::move(op), out);
  return true;
}

bool stack(Builder& b) {
  const int x = b.pick_any();
  const Type like = b.type(x);
  Op op = make_op(Kind::stack, {x});
  for (std::int64_t k = b.rng.uniform(0, 2); k > 0; --k)
    op.in.push_back(b.cast(b.pick([&](const Type& t) { return t.shape == like.shape; }), like.dtype));
  const std::int64_t rank = std::int64_t(like.shape.size()) + 1, axis = b.rng.uniform(0, rank - 1);
  op.axis = written(b.rng, axis, rank);
  Type out = like;
  out.shape.insert(out.shape.begin() + axis, std::int64_t(op.in.size()));
  b.emit(std::move(op), out);
  return true;
}

// Indices: a value of the block with an integer dtype, or a constant.
int indices(Builder& b, std::int64_t n) {
  if (n > 0 && b.rng.chance(0.3)) {
    const int v = b.pick([](const Type& t) { return nx::is_integer(t.dtype) && t.shape.size() <= 2; });
    if (v >= 0) return v;
  }
  nx::Shape shape = b.random_shape(2);
  if (n == 0) shape.push_back(0);  // nothing to take from: no indices
  return b.constant(random_indices(b.rng, b.rng.chance(0.5) ? nx::int32 : nx::int64, shape, n));
}

// The type of take(x, i, axis).
Type taken(const Builder& b, int x, int i, std::int64_t axis) {
  Type out = b.type(x);
  out.shape.erase(out.shape.begin() + axis);
  out.shape.insert(out.shape.begin() + axis, b.type(i).shape.begin(), b.type(i).shape.end());
  return out;
}

bool take(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty(); });
  if (x < 0) return false;
  const std::int64_t rank = rank_of(b, x), axis = b.rng.uniform(0, rank - 1);
  const int i = indices(b, b.type(x).shape[std::size_t(axis)]);
  Op op = make_op(Kind::take, {x, i});
  op.axis = written(b.rng, axis, rank);
  b.emit(std::move(op), taken(b, x, i, axis));
  return true;
}

// What scatter_add and segment_sum add into: rows of numbers (not bool).
bool has_addable_rows(const Type& t) { return !t.shape.empty() && t.dtype != nx::bool_; }

bool scatter_add(Builder& b) {
  const int x = b.pick(has_addable_rows);
  if (x < 0) return false;
  const std::int64_t rank = rank_of(b, x), axis = b.rng.uniform(0, rank - 1);
  const int i = indices(b, b.type(x).shape[std::size_t(axis)]);
  const int updates = b.provide(taken(b, x, i, axis));
  Op op = make_op(Kind::scatter_add, {x, i, updates});
  op.axis = written(b.rng, axis, rank);
  const Type out = b.type(x);
  b.emit(std::move(op), out);
  return true;
}

// Segment ids: mostly in range, some negative or past the last segment
// (dropped), sometimes computed from a value of the block (as uint8).
bool segment_sum(Builder& b) {
  const int x = b.pick(has_addable_rows);
  if (x < 0) return false;
  const std::int64_t rows = b.type(x).shape[0], segments = b.rng.uniform(0, 4);
  const int i = b.rng.chance(0.25)
                    ? b.fit(b.pick_any(), Type{nx::uint8, {rows}})
                    : b.constant(random_indices(b.rng, b.rng.chance(0.5) ? nx::int32 : nx::int64, {rows}, segments));
  Op op = make_op(Kind::segment_sum, {x, i});
  op.axis = segments;
  Type out = b.type(x);
  out.shape[0] = segments;
  b.emit(std::move(op), out);
  return true;
}

// Starts of a window into `shape`: a constant (clamped when out of range),
// or computed from a value of the block.
int starts(Builder& b, const nx::Shape& shape) {
  const nx::DType dtype = b.rng.pick(std::vector<nx::DType>{nx::int32, nx::int64, nx::int8, nx::uint32});
  const Type type{dtype, {std::int64_t(shape.size())}};
  if (b.rng.chance(0.25)) return b.fit(b.pick_any(), type);
  std::vector<std::int64_t> v;
  for (auto n : shape) v.push_back(b.rng.uniform(dtype == nx::uint32 ? 0 : -2, n + 1));
  return b.constant(nx::create(dtype, type.shape, v));
}

nx::Shape window(Builder& b, const nx::Shape& shape) {
  nx::Shape sizes;
  for (auto n : shape) sizes.push_back(b.rng.uniform(0, n));
  return sizes;
}

bool dynamic_slice(Builder& b) {
  const int x = b.pick_any();
  const nx::Shape shape = b.type(x).shape;
  Op op = make_op(Kind::dynamic_slice, {x, starts(b, shape)});
  op.shape = window(b, shape);
  const Type out{b.type(x).dtype, op.shape};
  b.emit(std::move(op), out);
  return true;
}

bool dynamic_update_slice(Builder& b) {
  const int x = b.pick_any();
  const Type like = b.type(x);
  auto fits = [&](const Type& t) {
    if (t.shape.size() != like.shape.size()) return false;
    for (std::size_t d = 0; d < t.shape.size(); ++d)
      if (t.shape[d] > like.shape[d]) return false;
    return true;
  };
  int update = b.rng.chance(0.6) ? b.pick(fits) : -1;
  if (update >= 0) {
    update = b.cast(update, like.dtype);
  } else {
    const Type part{like.dtype, window(b, like.shape)};
    update = b.fit(b.pick_any(), part);
  }
  b.emit(make_op(Kind::dynamic_update_slice, {x, update, starts(b, like.shape)}), like);
  return true;
}

const Generator generators[] = {
    {"concatenate", 2, concatenate},
    {"stack", 1, stack},
    {"take", 2, take},
    {"scatter_add", 2, scatter_add},
    {"segment_sum", 1, segment_sum},
    {"dynamic_slice", 2, dynamic_slice},
    {"dynamic_update_slice", 2, dynamic_update_slice},
};

}  // namespace

std::span<const Generator> indexing_generators() { return generators; }

}  // namespace gen
