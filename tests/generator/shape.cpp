// Generators of shape operations: views, copies, gathers and the dynamic
// slices, with negative axes and positions, and empty axes.
#include <algorithm>

#include "generators.hpp"
#include "values.hpp"

namespace gen {

namespace {

Op unary_op(Kind kind, int x) {
  Op op;
  op.kind = kind;
  op.in = {x};
  return op;
}

std::int64_t rank_of(const Builder& b, int v) { return std::int64_t(b.type(v).shape.size()); }

// A random order of 0..n-1.
nx::Axes permutation(Rng& rng, std::int64_t n) {
  nx::Axes perm;
  for (std::int64_t i = 0; i < n; ++i) perm.insert(perm.begin() + rng.uniform(0, i), i);
  return perm;
}

// Some distinct axes of a rank, perhaps counted from the end; `chosen`
// marks them.
nx::Axes some_axes(Rng& rng, std::int64_t rank, std::vector<bool>* chosen) {
  nx::Axes axes;
  chosen->assign(std::size_t(rank), false);
  for (std::int64_t d : permutation(rng, rank))
    if (rng.chance(0.5)) {
      axes.push_back(written(rng, d, rank));
      (*chosen)[std::size_t(d)] = true;
    }
  return axes;
}

// A shape of n elements: n's factors spread over a few axes, with axes of
// 1, or for n = 0 any shape with an empty axis.
nx::Shape shape_of(Builder& b, std::int64_t n) {
  nx::Shape shape;
  if (n == 0) {
    shape = b.random_shape(3);
    shape.insert(shape.begin() + b.rng.uniform(0, std::int64_t(shape.size())), 0);
    return shape;
  }
  const auto rank = std::size_t(b.rng.uniform(0, 4));
  if (rank == 0) return n == 1 ? shape : nx::Shape{n};
  shape.assign(rank, 1);
  for (std::int64_t f = 2; n > 1; ++f)
    while (n % f == 0) {
      shape[std::size_t(b.rng.uniform(0, std::int64_t(rank) - 1))] *= f;
      n /= f;
    }
  return shape;
}

bool reshape(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::reshape, x);
  const std::int64_t n = nx::numel(b.type(x).shape);
  const nx::Shape shape = shape_of(b, n);
  op.shape = shape;
  if (n > 0 && !shape.empty() && b.rng.chance(0.3)) op.shape[std::size_t(b.rng.uniform(0, std::int64_t(shape.size()) - 1))] = -1;
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool transpose(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::transpose, x);
  const nx::Shape in = b.type(x).shape;
  const auto rank = std::int64_t(in.size());
  Type out{b.type(x).dtype, {}};
  if (b.rng.chance(0.2)) {  // no permutation: every axis reversed
    out.shape.assign(in.rbegin(), in.rend());
  } else {
    for (auto a : permutation(b.rng, rank)) {
      out.shape.push_back(in[std::size_t(a)]);
      op.axes.push_back(written(b.rng, a, rank));
    }
  }
  b.emit(std::move(op), out);
  return true;
}

bool broadcast_to(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::broadcast, x);
  nx::Shape shape = b.random_shape(2);
  for (auto d : b.type(x).shape) shape.push_back(d == 1 ? b.random_dim() : d);
  op.shape = shape;
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool expand_dims(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::expand_dims, x);
  const std::int64_t rank = rank_of(b, x) + b.rng.uniform(1, 2);
  std::vector<bool> added;
  do op.axes = some_axes(b.rng, rank, &added);
  while (std::int64_t(op.axes.size()) != rank - rank_of(b, x));
  nx::Shape shape;
  auto from = b.type(x).shape.begin();
  for (bool one : added) shape.push_back(one ? 1 : *from++);
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool squeeze(Builder& b) {
  const int x = b.pick([](const Type& t) { return std::count(t.shape.begin(), t.shape.end(), 1) > 0; });
  if (x < 0) return false;
  Op op = unary_op(Kind::squeeze, x);
  const nx::Shape& in = b.type(x).shape;
  std::vector<bool> drop(in.size());
  for (std::size_t d = 0; d < in.size(); ++d)
    if (in[d] == 1 && b.rng.chance(0.6)) {
      drop[d] = true;
      op.axes.push_back(written(b.rng, std::int64_t(d), std::int64_t(in.size())));
    }
  if (op.axes.empty() || b.rng.chance(0.2)) {  // no axes: every axis of length 1
    op.axes.clear();
    for (std::size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  }
  nx::Shape shape;
  for (std::size_t d = 0; d < in.size(); ++d)
    if (!drop[d]) shape.push_back(in[d]);
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool moveaxis(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty(); });
  if (x < 0) return false;
  Op op = unary_op(Kind::moveaxis, x);
  const std::int64_t rank = rank_of(b, x), from = b.rng.uniform(0, rank - 1), to = b.rng.uniform(0, rank - 1);
  op.axis = written(b.rng, from, rank);
  op.to = written(b.rng, to, rank);
  nx::Shape shape = b.type(x).shape;
  shape.erase(shape.begin() + from);
  shape.insert(shape.begin() + to, b.type(x).shape[std::size_t(from)]);
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool flatten(Builder& b) {
  const int x = b.pick_any();
  const Type out{b.type(x).dtype, {nx::numel(b.type(x).shape)}};
  b.emit(unary_op(Kind::flatten, x), out);
  return true;
}

// Python slicing: positions beyond either end, negative ones, steps 1 to 3,
// and sometimes fewer axes than the rank (the rest are kept whole).
bool slice(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::slice, x);
  const nx::Shape& in = b.type(x).shape;
  const auto axes = std::size_t(b.rng.uniform(0, std::int64_t(in.size())));
  const bool steps = b.rng.chance(0.7);
  nx::Shape shape = in;
  for (std::size_t d = 0; d < axes; ++d) {
    const std::int64_t n = in[d], start = b.rng.uniform(-n - 2, n + 2), stop = b.rng.uniform(-n - 2, n + 2);
    const std::int64_t step = steps ? b.rng.uniform(1, 3) : 1;
    auto position = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
    const std::int64_t from = position(start), to = std::max(from, position(stop));
    shape[d] = (to - from + step - 1) / step;
    op.starts.push_back(start), op.stops.push_back(stop);
    if (steps) op.steps.push_back(step);
  }
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool pad(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::pad, x);
  nx::Shape shape = b.type(x).shape;
  for (auto& d : shape) {
    op.widths.emplace_back(b.rng.uniform(0, 2), b.rng.uniform(0, 2));
    d += op.widths.back().first + op.widths.back().second;
  }
  op.value = b.gradient() ? b.rng.real(-2, 2) : random_scalar(b.rng, false);
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

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
  Op op;
  op.kind = Kind::concatenate;
  const std::int64_t rank = rank_of(b, x), axis = b.rng.uniform(0, rank - 1);
  op.in = joinable(b, x, axis);
  op.axis = written(b.rng, axis, rank);
  Type out = b.type(x);
  out.shape[std::size_t(axis)] = 0;
  for (int v : op.in) out.shape[std::size_t(axis)] += b.type(v).shape[std::size_t(axis)];
  b.emit(std::move(op), out);
  return true;
}

bool stack(Builder& b) {
  const int x = b.pick_any();
  Op op;
  op.kind = Kind::stack;
  const Type like = b.type(x);
  op.in = {x};
  for (std::int64_t k = b.rng.uniform(0, 2); k > 0; --k)
    op.in.push_back(b.cast(b.pick([&](const Type& t) { return t.shape == like.shape; }), like.dtype));
  const std::int64_t rank = std::int64_t(like.shape.size()) + 1, axis = b.rng.uniform(0, rank - 1);
  op.axis = written(b.rng, axis, rank);
  Type out = like;
  out.shape.insert(out.shape.begin() + axis, std::int64_t(op.in.size()));
  b.emit(std::move(op), out);
  return true;
}

bool flip(Builder& b) {
  const int x = b.pick_any();
  Op op = unary_op(Kind::flip, x);
  std::vector<bool> chosen;
  op.axes = some_axes(b.rng, rank_of(b, x), &chosen);  // none: every axis
  const Type out = b.type(x);
  b.emit(std::move(op), out);
  return true;
}

bool get(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty() && t.shape[0] > 0; });
  if (x < 0) return false;
  Op op = unary_op(Kind::get, x);
  const std::int64_t n = b.type(x).shape[0];
  op.axis = b.rng.uniform(-n, n - 1);
  Type out = b.type(x);
  out.shape.erase(out.shape.begin());
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

bool take(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty(); });
  if (x < 0) return false;
  const std::int64_t rank = rank_of(b, x), axis = b.rng.uniform(0, rank - 1);
  const int i = indices(b, b.type(x).shape[std::size_t(axis)]);
  Op op;
  op.kind = Kind::take;
  op.in = {x, i};
  op.axis = written(b.rng, axis, rank);
  Type out = b.type(x);
  out.shape.erase(out.shape.begin() + axis);
  out.shape.insert(out.shape.begin() + axis, b.type(i).shape.begin(), b.type(i).shape.end());
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
  Op op;
  op.kind = Kind::dynamic_slice;
  op.in = {x, starts(b, shape)};
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
  update = update >= 0 ? b.cast(update, like.dtype) : b.fit(b.pick_any(), Type{like.dtype, window(b, like.shape)});
  Op op;
  op.kind = Kind::dynamic_update_slice;
  op.in = {x, update, starts(b, like.shape)};
  b.emit(std::move(op), like);
  return true;
}

const Generator generators[] = {
    {"reshape", 2, reshape},
    {"transpose", 2, transpose},
    {"broadcast_to", 1, broadcast_to},
    {"expand_dims", 1, expand_dims},
    {"squeeze", 1, squeeze},
    {"moveaxis", 1, moveaxis},
    {"flatten", 1, flatten},
    {"slice", 3, slice},
    {"pad", 2, pad},
    {"concatenate", 2, concatenate},
    {"stack", 1, stack},
    {"flip", 1, flip},
    {"get", 1, get},
    {"take", 2, take},
    {"dynamic_slice", 2, dynamic_slice},
    {"dynamic_update_slice", 2, dynamic_update_slice},
};

}  // namespace

std::span<const Generator> shape_generators() { return generators; }

}  // namespace gen
