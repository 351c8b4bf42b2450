// Generators of elementwise operations, reductions and detach.
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
  b.call_binary(f.name, b.guard(a, f.first), b.guard(other, f.second));
  return true;
}

bool binary_scalar(Builder& b) {
  Op op;
  op.kind = Kind::binary_scalar;
  op.fn = int(any_entry(b.rng, binary_functions()));
  const BinaryFunction& f = binary_functions()[std::size_t(op.fn)];
  const int a = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype); });
  if (a < 0) return false;
  op.flag = b.rng.chance(0.5);  // the double first
  op.in = {b.guard(a, op.flag ? f.second : f.first)};
  op.value = scalar_in(b, op.flag ? f.first : f.second);
  const Type& x = b.type(op.in[0]);
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
  return b.call_scalar(b.rng.pick(comparisons), x, scalar_in(b, Domain::any));
}

bool where(Builder& b) {
  const int c = condition(b);
  if (c < 0) return false;
  const int a = b.pick([&](const Type& t) { return broadcast(t.shape, b.type(c).shape); });
  nx::Shape shape;
  broadcast(b.type(c).shape, b.type(a).shape, &shape);
  Op op;
  op.in = {c, a};
  if (b.rng.chance(0.3)) {
    op.kind = Kind::where_scalar;
    op.flag = b.rng.chance(0.5);  // the double is the first choice
    op.value = scalar_in(b, Domain::any);
  } else {
    op.kind = Kind::where;
    const int other = partner(b, shape, b.type(a).dtype);
    broadcast(shape, b.type(other).shape, &shape);
    op.in.push_back(other);
  }
  const nx::DType dtype = b.type(a).dtype;
  b.emit(std::move(op), Type{dtype, shape});
  return true;
}

bool cast(Builder& b) {
  Op op;
  op.kind = Kind::cast;
  op.in = {b.pick_any()};
  op.dtype = b.random_dtype();  // the same dtype too: a conversion that changes nothing
  const Type out{op.dtype, b.type(op.in[0]).shape};
  b.emit(std::move(op), out);
  return true;
}

bool clamp(Builder& b) {
  Op op;
  op.kind = Kind::clamp;
  const int x = b.pick([](const Type& t) { return !nx::is_complex(t.dtype); });
  if (x < 0) return false;
  op.in = {x};
  op.value = scalar_in(b, Domain::any);
  op.upper = scalar_in(b, Domain::any);
  b.emit(std::move(op), b.type(x));
  return true;
}

// The axes a reduction takes: empty (every axis) or some, each perhaps
// counted from the end; false when the function cannot reduce x.
bool reduction_axes(Builder& b, const nx::Shape& shape, bool needs_elements, nx::Axes* axes, nx::Shape* out,
                    bool keepdims) {
  const auto rank = std::int64_t(shape.size());
  std::vector<bool> reduced(shape.size(), false);
  bool all_allowed = true;
  for (std::int64_t d = 0; d < rank; ++d) all_allowed = all_allowed && !(needs_elements && shape[d] == 0);
  if (all_allowed && b.rng.chance(0.25)) {
    reduced.assign(shape.size(), true);
  } else {
    for (std::int64_t d = 0; d < rank; ++d)
      if (!(needs_elements && shape[d] == 0) && b.rng.chance(0.5)) {
        reduced[std::size_t(d)] = true;
        axes->push_back(written(b.rng, d, rank));
      }
    if (axes->empty() && !all_allowed) return false;
    if (axes->empty()) reduced.assign(shape.size(), true);
  }
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d]) out->push_back(shape[d]);
    else if (keepdims) out->push_back(1);
  return true;
}

bool reduce(Builder& b) {
  Op op;
  op.kind = Kind::reduce;
  op.fn = int(any_entry(b.rng, reduce_functions()));
  const ReduceFunction& f = reduce_functions()[std::size_t(op.fn)];
  const int x = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype); });
  if (x < 0) return false;
  op.in = {x};
  op.flag = b.rng.chance(0.3);
  Type out{result_dtype(f.result, b.type(x).dtype), {}};
  if (!reduction_axes(b, b.type(x).shape, f.needs_elements, &op.axes, &out.shape, op.flag)) return false;
  b.emit(std::move(op), out);
  return true;
}

bool arg(Builder& b) {
  Op op;
  op.kind = Kind::arg;
  op.fn = int(any_entry(b.rng, arg_functions()));
  const ArgFunction& f = arg_functions()[std::size_t(op.fn)];
  auto nonempty_axis = [](const Type& t) {
    for (auto d : t.shape)
      if (d > 0) return true;
    return false;
  };
  const int x = b.pick([&](const Type& t) { return accepts(f.accepts, t.dtype) && nonempty_axis(t); });
  if (x < 0) return false;
  nx::Shape shape = b.type(x).shape;
  std::int64_t axis;
  do axis = b.rng.uniform(0, std::int64_t(shape.size()) - 1);
  while (shape[std::size_t(axis)] == 0);
  op.in = {x};
  op.axis = written(b.rng, axis, std::int64_t(shape.size()));
  shape.erase(shape.begin() + axis);
  b.emit(std::move(op), Type{nx::int32, shape});
  return true;
}

// Not in gradient cases: differences see through detach, derivatives do not.
bool detach(Builder& b) {
  if (b.gradient()) return false;
  Op op;
  op.kind = Kind::detach;
  op.in = {b.pick_any()};
  const Type t = b.type(op.in[0]);
  b.emit(std::move(op), t);
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
