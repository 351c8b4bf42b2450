// Generators of shape operations (views, and pad), with negative axes and
// positions, and empty axes.
#include <algorithm>

#include "generators.hpp"
#include "values.hpp"

namespace gen {

namespace {

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
  Op op = make_op(Kind::reshape, {x});
  const std::int64_t n = nx::numel(b.type(x).shape);
  const nx::Shape shape = shape_of(b, n);
  op.shape = shape;
  if (n > 0 && !shape.empty() && b.rng.chance(0.3)) op.shape[std::size_t(b.rng.uniform(0, std::int64_t(shape.size()) - 1))] = -1;
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool transpose(Builder& b) {
  const int x = b.pick_any();
  Op op = make_op(Kind::transpose, {x});
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
  Op op = make_op(Kind::broadcast, {x});
  nx::Shape shape = b.random_shape(2);
  for (auto d : b.type(x).shape) shape.push_back(d == 1 ? b.random_dim() : d);
  if (nx::numel(shape) > 16384) return false;  // (a case stays cheap: a broadcast of a broadcast grows fast)
  op.shape = shape;
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool expand_dims(Builder& b) {
  const int x = b.pick_any();
  Op op = make_op(Kind::expand_dims, {x});
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
  Op op = make_op(Kind::squeeze, {x});
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
  Op op = make_op(Kind::moveaxis, {x});
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
  b.emit(make_op(Kind::flatten, {x}), out);
  return true;
}

// Python slicing: positions beyond either end, negative ones, steps 1 to 3,
// and sometimes fewer axes than the rank (the rest are kept whole).
bool slice(Builder& b) {
  const int x = b.pick_any();
  Op op = make_op(Kind::slice, {x});
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
  Op op = make_op(Kind::pad, {x});
  nx::Shape shape = b.type(x).shape;
  for (auto& d : shape) {
    const std::int64_t hi = b.rng.uniform(0, 2);
    const std::int64_t lo = b.rng.uniform(0, 2);
    op.widths.emplace_back(lo, hi);
    d += lo + hi;
  }
  op.value = b.gradient() ? b.rng.real(-2, 2) : random_scalar(b.rng, false);
  b.emit(std::move(op), Type{b.type(x).dtype, shape});
  return true;
}

bool flip(Builder& b) {
  const int x = b.pick_any();
  Op op = make_op(Kind::flip, {x});
  std::vector<bool> chosen;
  op.axes = some_axes(b.rng, rank_of(b, x), &chosen);  // none: every axis
  const Type out = b.type(x);
  b.emit(std::move(op), out);
  return true;
}

bool get(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty() && t.shape[0] > 0; });
  if (x < 0) return false;
  Op op = make_op(Kind::get, {x});
  const std::int64_t n = b.type(x).shape[0];
  op.axis = b.rng.uniform(-n, n - 1);
  Type out = b.type(x);
  out.shape.erase(out.shape.begin());
  b.emit(std::move(op), out);
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
    {"flip", 1, flip},
    {"get", 1, get},
};

}  // namespace

std::span<const Generator> shape_generators() { return generators; }

}  // namespace gen
