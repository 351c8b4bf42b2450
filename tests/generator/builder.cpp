#include "builder.hpp"

#include <algorithm>
#include <vector>

#include "generators.hpp"

namespace gen {

namespace {

std::vector<Generator> all_generators() {
  std::vector<Generator> all;
  for (auto family : {elementwise_generators(), shape_generators(), indexing_generators(), linalg_generators(),
                      random_generators(), scan_generators(), construct_generators(), map_generators()})
    all.insert(all.end(), family.begin(), family.end());
  return all;
}

template <class Table> int index_in(Table table, std::string_view name) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name) return int(i);
  throw std::logic_error("gen: no nx function " + std::string(name));
}

}  // namespace

int unary_index(std::string_view name) { return index_in(unary_functions(), name); }
int binary_index(std::string_view name) { return index_in(binary_functions(), name); }
int reduce_index(std::string_view name) { return index_in(reduce_functions(), name); }

bool broadcast(const nx::Shape& a, const nx::Shape& b, nx::Shape* out) {
  const std::size_t n = std::max(a.size(), b.size());
  nx::Shape shape(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    shape[i] = x == 1 ? y : x;
  }
  if (out) *out = shape;
  return true;
}

int Builder::emit(Op op, std::span<const Type> types) {
  const std::vector<Type> outs(types.begin(), types.end());  // (types may view block_.types)
  for (const Type& t : outs) {
    op.out.push_back(values());
    block_.types.push_back(t);
  }
  const int first = op.out.empty() ? -1 : op.out[0];  // (a total_add has no result)
  block_.ops.push_back(std::move(op));
  return first;
}

int Builder::count(Kind kind) const {
  return int(std::count_if(block_.ops.begin(), block_.ops.end(), [kind](const Op& op) { return op.kind == kind; }));
}

Builder Builder::nested(Block& block) const {
  Builder inner(rng, c, block, depth + 1);
  inner.totals = totals;
  return inner;
}

void Builder::grow(int count) {
  static const std::vector<Generator> generators = all_generators();
  std::vector<int> weights;
  for (const Generator& g : generators) weights.push_back(g.weight);
  for (int i = 0; i < count; ++i)
    for (int attempt = 0; attempt < 20; ++attempt)
      if (generators[rng.weighted(weights)].emit(*this)) break;
}

// Half the time the newest fitting value, so that operations chain.
int Builder::pick(const std::function<bool(const Type&)>& fits) {
  std::vector<int> found;
  for (int v = 0; v < values(); ++v)
    if (fits(type(v))) found.push_back(v);
  if (found.empty()) return -1;
  return rng.chance(0.5) ? found.back() : rng.pick(found);
}

std::vector<int> Builder::unread() const {
  std::vector<bool> read(std::size_t(values()), false);
  for (const Op& op : block_.ops)
    for (int v : op.in) read[std::size_t(v)] = true;
  std::vector<int> out;
  for (int v = block_.params; v < values(); ++v)
    if (!read[std::size_t(v)]) out.push_back(v);
  if (out.empty()) out.push_back(values() - 1);
  return out;
}

int Builder::constant(const nx::Tensor& t) {
  Op op = make_op(Kind::constant, {});
  op.constant = t;
  return emit(std::move(op), Type{t.dtype(), t.shape()});
}

int Builder::cast(int v, nx::DType dtype) {
  if (type(v).dtype == dtype) return v;
  Op op = make_op(Kind::cast, {v});
  op.dtype = dtype;
  return emit(std::move(op), Type{dtype, type(v).shape});
}

// Shapes differ: v's first elements reshaped when it has enough, else the
// sum of its elements broadcast (bool has no sum: int32 stands in).
int Builder::fit(int v, Type target) {
  if (type(v).shape == target.shape) return cast(v, target.dtype);
  const std::int64_t n = nx::numel(target.shape), have = nx::numel(type(v).shape);
  return cast(n > 0 && have >= n ? first_elements(v, target.shape) : spread_sum(v, target), target.dtype);
}

int Builder::first_elements(int v, nx::Shape shape) {
  const std::int64_t n = nx::numel(shape);
  const nx::DType dtype = type(v).dtype;
  int x = emit(make_op(Kind::flatten, {v}), Type{dtype, {nx::numel(type(v).shape)}});
  if (type(x).shape[0] > n) {
    Op head = make_op(Kind::slice, {x});
    head.starts = {0};
    head.stops = {n};
    x = emit(std::move(head), Type{dtype, {n}});
  }
  Op re = make_op(Kind::reshape, {x});
  re.shape = shape;
  return emit(std::move(re), Type{dtype, shape});
}

int Builder::spread_sum(int v, Type target) {
  const nx::DType total_dtype = target.dtype == nx::bool_ ? nx::int32 : target.dtype;
  Op sum = make_op(Kind::reduce, {cast(v, total_dtype)});
  sum.fn = reduce_index("sum");  // over every axis
  const nx::DType sum_dtype = result_dtype(reduce_functions()[std::size_t(sum.fn)].result, total_dtype);
  const int total = emit(std::move(sum), Type{sum_dtype, {}});
  if (target.shape.empty()) return total;
  Op spread = make_op(Kind::broadcast, {total});
  spread.shape = target.shape;
  return emit(std::move(spread), Type{sum_dtype, target.shape});
}

int Builder::call_unary(std::string_view name, int v) {
  Op op = make_op(Kind::unary, {v});
  op.fn = unary_index(name);
  const UnaryFunction& f = unary_functions()[std::size_t(op.fn)];
  return emit(std::move(op), Type{result_dtype(f.result, type(v).dtype), type(v).shape});
}

int Builder::call_scalar(std::string_view name, int v, double value) {
  Op op = make_op(Kind::binary_scalar, {v});
  op.fn = binary_index(name);
  op.value = value;
  const BinaryFunction& f = binary_functions()[std::size_t(op.fn)];
  return emit(std::move(op), Type{result_dtype(f.result, type(v).dtype), type(v).shape});
}

int Builder::call_binary(std::string_view name, int a, int b) {
  Op op = make_op(Kind::binary, {a, b});
  op.fn = binary_index(name);
  const BinaryFunction& f = binary_functions()[std::size_t(op.fn)];
  nx::Shape shape;
  broadcast(type(a).shape, type(b).shape, &shape);
  return emit(std::move(op), Type{result_dtype(f.result, type(a).dtype), shape});
}

int Builder::provide(Type want) {
  const int v = pick([&](const Type& t) { return t == want; });
  return v >= 0 && rng.chance(0.8) ? v : fit(pick_any(), want);
}

int Builder::reduction(int v) {
  if (nx::is_complex(type(v).dtype)) v = call_unary("abs", v);
  std::vector<std::string_view> names;
  if (type(v).dtype == nx::bool_) names = {"any", "all"};
  else {
    names = {"sum"};
    if (nx::numel(type(v).shape) > 0) names.insert(names.end(), {"max", "min"});
    if (nx::is_inexact(type(v).dtype) && nx::numel(type(v).shape) > 0) names.push_back("mean");  // (not NaN)
  }
  Op op = make_op(Kind::reduce, {v});  // over every axis
  op.fn = reduce_index(rng.pick(names));
  const ReduceFunction& f = reduce_functions()[std::size_t(op.fn)];
  return emit(std::move(op), Type{result_dtype(f.result, type(v).dtype), {}});
}

int Builder::predicate(int v, int threshold) {
  const int r = reduction(v);
  if (type(r).dtype == nx::bool_) return rng.chance(0.3) ? call_unary("logical_not", r) : r;
  static const std::vector<std::string_view> comparisons = {"less", "less_equal", "greater", "greater_equal"};
  const std::string_view compare = rng.pick(comparisons);
  if (threshold >= 0) return call_binary(compare, r, fit(threshold, Type{type(r).dtype, {}}));
  return call_scalar(compare, r, rng.real(-3, 3));
}

// tanh maps onto (-1, 1), then an affine map onto the domain.
int Builder::guard(int v, Domain domain) {
  if (!gradient() || domain == Domain::any || !nx::is_inexact(type(v).dtype)) return v;
  const int t = call_unary("tanh", v);
  switch (domain) {
    case Domain::positive: return call_scalar("add", t, 1.5);
    case Domain::unit: return call_scalar("mul", t, 0.8);
    default: return call_scalar("mul", t, 2.);
  }
}

nx::DType Builder::random_dtype() {
  using namespace nx;
  if (gradient()) {  // float64 mostly; integers and bool cut derivatives; complex passes them on
    static const std::vector<DType> dtypes = {float64, float64, float64, float64, int32, int64, bool_, complex128};
    return rng.pick(dtypes);
  }
  static const std::vector<DType> dtypes = {float64, float64, float64, float32, float32, float32, int32, int32,
                                            int32,   int64,   int64,   bool_,   bool_,   bool_,   int8,  int16,
                                            uint8,   uint32,  uint64,  float16, bfloat16, complex64, complex128};
  return rng.pick(dtypes);
}

std::int64_t Builder::random_dim() {
  const double r = rng.real(0, 1);
  return r < 0.08 ? 0 : r < 0.3 ? 1 : r < 0.95 ? rng.uniform(2, 4) : rng.uniform(5, 40);
}

// At most a few thousand elements, so that a case stays cheap.
nx::Shape Builder::random_shape(int max_rank) {
  nx::Shape shape(std::size_t(rng.uniform(0, max_rank)));
  for (auto& d : shape) d = random_dim();
  while (nx::numel(shape) > 4096) *std::max_element(shape.begin(), shape.end()) /= 2;
  return shape;
}

}  // namespace gen
