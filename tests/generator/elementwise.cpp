// Generators of elementwise operations, reductions and detach.
#include <algorithm>
#include <optional>

#include "generators.hpp"
#include "values.hpp"

namespace gen {

namespace {

template <class Table> std::size_t any_entry(Rng& rng, Table table) {
  return std::size_t(rng.uniform(0, std::int64_t(table.size()) - 1));
}

// A double operand: in gradient cases, inside the operand's domain.
double scalar_in(Builder& b, Domain domain) {
  if (!b.gradient()) return random_scalar(b.rng, false);
  switch (domain) {
    case Domain::positive: return b.rng.real(0.5, 2.5);
    case Domain::unit: return b.rng.real(-0.8, 0.8);
    default: return b.rng.real(-2, 2);
  }
}

// A value whose shape broadcasts with `shape` (one of another shape half
// the time), cast to dtype.
int partner(Builder& b, nx::Shape shape, nx::DType dtype) {
  int v = -1;
  if (b.rng.chance(0.5)) v = b.pick([&](const Type& t) { return t.shape != shape && broadcast(t.shape, shape); });
  if (v < 0) v = b.pick([&](const Type& t) { return broadcast(t.shape, shape); });
  return v < 0 ? -1 : b.cast(v, dtype);
}

bool unary(Builder& b) {
  const UnaryFunction& f = unary_functions()[any_entry(b.rng, unary_functions())];
  const int x = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype); });
  if (x < 0) return false;
  b.call_unary(f.name, b.guard(x, f.domain));
  return true;
}

bool binary(Builder& b) {
  const BinaryFunction& f = binary_functions()[any_entry(b.rng, binary_functions())];
  const int a = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype); });
  if (a < 0) return false;
  const int other = partner(b, b.type(a).shape, b.type(a).dtype);
  const int y = b.guard(other, f.second);
  const int x = b.guard(a, f.first);
  b.call_binary(f.name, x, y);
  return true;
}

bool binary_scalar(Builder& b) {
  const auto fn = int(any_entry(b.rng, binary_functions()));
  const BinaryFunction& f = binary_functions()[std::size_t(fn)];
  const int a = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype); });
  if (a < 0) return false;
  const bool first = b.rng.chance(0.5);  // the double first
  Op op = make_op(Kind::binary_scalar, {b.guard(a, first ? f.second : f.first)});
  op.fn = fn;
  op.flag = first;
  op.value = scalar_in(b, first ? f.first : f.second);
  const Type x = b.type(op.in[0]);
  b.emit(std::move(op), Type{result_dtype(f.result, x.dtype), x.shape});
  return true;
}

// A bool value, often a comparison made for the purpose.
int condition(Builder& b) {
  const int c = b.pick([](const Type& t) { return t.dtype == nx::bool_; });
  if (c >= 0 && b.rng.chance(0.6)) return c;
  const int x = b.pick([](const Type& t) { return !nx::is_complex(t.dtype); });
  if (x < 0) return c;
  static const std::vector<std::string_view> comparisons = {"less", "less_equal", "greater", "greater_equal",
                                                            "equal", "not_equal"};
  const double threshold = scalar_in(b, Domain::any);
  const std::string_view compare = b.rng.pick(comparisons);
  return b.call_scalar(compare, x, threshold);
}

bool where(Builder& b) {
  const int c = condition(b);
  if (c < 0) return false;
  const int a = b.pick([&](const Type& t) { return broadcast(t.shape, b.type(c).shape); });
  nx::Shape shape;
  broadcast(b.type(c).shape, b.type(a).shape, &shape);
  Op op = make_op(Kind::where, {c, a});
  if (b.rng.chance(0.3)) {
    op.kind = Kind::where_scalar;
    op.flag = b.rng.chance(0.5);  // the double is the first choice
    op.value = scalar_in(b, Domain::any);
  } else {
    const int other = partner(b, shape, b.type(a).dtype);
    broadcast(shape, b.type(other).shape, &shape);
    op.in.push_back(other);
  }
  const nx::DType dtype = b.type(a).dtype;
  b.emit(std::move(op), Type{dtype, shape});
  return true;
}

bool cast(Builder& b) {
  Op op = make_op(Kind::cast, {b.pick_any()});
  op.dtype = b.random_dtype();  // the same dtype too: a conversion that changes nothing
  const Type out{op.dtype, b.type(op.in[0]).shape};
  b.emit(std::move(op), out);
  return true;
}

bool clamp(Builder& b) {
  const int x = b.pick([](const Type& t) { return !nx::is_complex(t.dtype); });
  if (x < 0) return false;
  Op op = make_op(Kind::clamp, {x});
  op.value = scalar_in(b, Domain::any);
  op.upper = scalar_in(b, Domain::any);
  b.emit(std::move(op), b.type(x));
  return true;
}

// Some axes, perhaps counted from the end; none means every axis, which a
// function that needs elements takes only when no axis is empty.
std::optional<nx::Axes> reduction_axes(Builder& b, const nx::Shape& shape, bool needs_elements) {
  const auto rank = std::int64_t(shape.size());
  nx::Axes axes;
  bool every_axis_allowed = true;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool allowed = !(needs_elements && shape[std::size_t(d)] == 0);
    every_axis_allowed = every_axis_allowed && allowed;
    if (allowed && b.rng.chance(0.4)) axes.push_back(written(b.rng, d, rank));
  }
  if (axes.empty() && !every_axis_allowed) return std::nullopt;
  return axes;
}

nx::Shape reduced_shape(const nx::Shape& shape, const nx::Axes& axes, bool keepdims) {
  const auto rank = std::int64_t(shape.size());
  nx::Shape out;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool reduced = axes.empty() || std::count(axes.begin(), axes.end(), d) ||
                         std::count(axes.begin(), axes.end(), d - rank);
    if (!reduced) out.push_back(shape[std::size_t(d)]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

bool reduce(Builder& b) {
  const auto fn = int(any_entry(b.rng, reduce_functions()));
  const ReduceFunction& f = reduce_functions()[std::size_t(fn)];
  const int x = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype); });
  if (x < 0) return false;
  const std::optional<nx::Axes> axes = reduction_axes(b, b.type(x).shape, f.needs_elements);
  if (!axes) return false;
  Op op = make_op(Kind::reduce, {x});
  op.fn = fn;
  op.axes = *axes;
  op.flag = b.rng.chance(0.3);
  const Type out{result_dtype(f.result, b.type(x).dtype), reduced_shape(b.type(x).shape, *axes, op.flag)};
  b.emit(std::move(op), out);
  return true;
}

bool arg(Builder& b) {
  const auto fn = int(any_entry(b.rng, arg_functions()));
  const ArgFunction& f = arg_functions()[std::size_t(fn)];
  auto nonempty_axis = [](const Type& t) { return std::count(t.shape.begin(), t.shape.end(), 0) < std::ptrdiff_t(t.shape.size()); };
  const int x = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype) && nonempty_axis(t); });
  if (x < 0) return false;
  nx::Shape shape = b.type(x).shape;
  std::int64_t axis;
  do axis = b.rng.uniform(0, std::int64_t(shape.size()) - 1);
  while (shape[std::size_t(axis)] == 0);
  Op op = make_op(Kind::arg, {x});
  op.fn = fn;
  op.axis = written(b.rng, axis, std::int64_t(shape.size()));
  shape.erase(shape.begin() + axis);
  b.emit(std::move(op), Type{nx::int32, shape});
  return true;
}

// Not in gradient cases: differences see through detach, derivatives do not.
bool detach(Builder& b) {
  if (b.gradient()) return false;
  const int x = b.pick_any();
  b.emit(make_op(Kind::detach, {x}), b.type(x));
  return true;
}

const Generator generators[] = {
    {"unary", 8, unary},   {"binary", 6, binary}, {"binary_scalar", 4, binary_scalar},
    {"where", 2, where},   {"cast", 2, cast},     {"clamp", 1, clamp},
    {"reduce", 4, reduce}, {"arg", 1, arg},       {"detach", 1, detach},
};

}  // namespace

std::span<const Generator> elementwise_generators() { return generators; }

}  // namespace gen
