// Generators of matrix products and of solve, inv and cholesky on
// well-conditioned matrices.
#include "generators.hpp"

namespace gen {

namespace {

nx::Shape batch_of(const nx::Shape& s) { return s.size() < 2 ? nx::Shape{} : nx::Shape(s.begin(), s.end() - 2); }
nx::Shape joined(nx::Shape a, std::initializer_list<std::int64_t> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// b for a @ b: a value that fits (cast to a's dtype) or one made to fit.
int right_operand(Builder& b, const Type& a, const std::function<bool(const Type&)>& fits, nx::Shape made) {
  const int v = b.rng.chance(0.7) ? b.pick(fits) : -1;
  return v >= 0 ? b.cast(v, a.dtype) : b.fit(b.pick_any(), Type{a.dtype, made});
}

bool matmul(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty() && t.dtype != nx::bool_; });
  if (x < 0) return false;
  const Type a = b.type(x);
  const std::int64_t k = a.shape.back();
  auto fits = [&](const Type& t) {
    if (t.shape.size() == 1) return t.shape[0] == k;
    return t.shape.size() >= 2 && t.shape[t.shape.size() - 2] == k && broadcast(batch_of(t.shape), batch_of(a.shape));
  };
  const int y = right_operand(b, a, fits, b.rng.chance(0.3) ? nx::Shape{k} : nx::Shape{k, b.random_dim()});
  const nx::Shape& s = b.type(y).shape;
  nx::Shape shape;
  broadcast(batch_of(a.shape), batch_of(s), &shape);
  if (a.shape.size() > 1) shape.push_back(a.shape[a.shape.size() - 2]);
  if (s.size() > 1) shape.push_back(s.back());
  b.emit(make_op(Kind::matmul, {x, y}), Type{a.dtype, shape});
  return true;
}

// NumPy's dot beyond scalars: a of rank 1 to 3, b of rank 1 or 2.
bool dot(Builder& b) {
  const int x = b.pick([](const Type& t) { return !t.shape.empty() && t.shape.size() <= 3 && t.dtype != nx::bool_; });
  if (x < 0) return false;
  const Type a = b.type(x);
  const std::int64_t k = a.shape.back();
  auto fits = [&](const Type& t) { return (t.shape.size() == 1 || t.shape.size() == 2) && t.shape[0] == k; };
  const int y = right_operand(b, a, fits, b.rng.chance(0.5) ? nx::Shape{k} : nx::Shape{k, b.random_dim()});
  nx::Shape shape(a.shape.begin(), a.shape.end() - 1);
  if (b.type(y).shape.size() == 2) shape.push_back(b.type(y).shape[1]);
  b.emit(make_op(Kind::dot, {x, y}), Type{a.dtype, shape});
  return true;
}

int swap_last_axes(Builder& b, int v) {
  Op op = make_op(Kind::transpose, {v});
  Type out = b.type(v);
  for (std::int64_t d = 0; d < std::int64_t(out.shape.size()); ++d) op.axes.push_back(d);
  std::swap(op.axes[op.axes.size() - 1], op.axes[op.axes.size() - 2]);
  std::swap(out.shape[out.shape.size() - 1], out.shape[out.shape.size() - 2]);
  return b.emit(std::move(op), out);
}

// Matrices from a value of the block: tanh of its finite entries, in
// (-1, 1), plus n + 1 on the diagonal, so strictly diagonally dominant (and
// when symmetric, positive definite).
int conditioned(Builder& b, nx::DType dtype, const nx::Shape& batch, std::int64_t n, bool symmetric) {
  const int m = b.fit(b.pick_any(), Type{dtype, joined(batch, {n, n})});
  Op finite = make_op(Kind::where_scalar, {b.call_unary("isfinite", m), m});  // value 0 where not
  int t = b.call_unary("tanh", b.emit(std::move(finite), b.type(m)));
  if (symmetric) t = b.call_scalar("mul", b.call_binary("add", t, swap_last_axes(b, t)), 0.5);
  return b.call_binary("add", t, b.constant(nx::eye(dtype, n) * double(n + 1)));
}

struct System {
  nx::DType dtype;
  nx::Shape batch;
  std::int64_t n;
};
System random_system(Builder& b, bool complex_too) {
  std::vector<nx::DType> dtypes = {nx::float64, nx::float32};
  if (complex_too) dtypes.insert(dtypes.end(), {nx::complex64, nx::complex128});
  const nx::DType dtype = b.gradient() ? nx::float64 : b.rng.pick(dtypes);
  nx::Shape batch;
  if (b.rng.chance(0.3)) batch.push_back(b.random_dim());
  return {dtype, batch, b.rng.chance(0.1) ? 0 : b.rng.uniform(1, 4)};
}

// b as a vector ([n], or batched with one axis fewer than a) or as matrices
// ([..., n, k]); the result's shape by NumPy's rules.
bool solve(Builder& b) {
  const System s = random_system(b, true);
  const int a = conditioned(b, s.dtype, s.batch, s.n, false);
  const bool vector = b.rng.chance(0.4);
  nx::Shape rhs_batch = s.batch;
  if (!s.batch.empty() && b.rng.chance(0.3)) rhs_batch = vector ? nx::Shape{} : nx::Shape{1};
  if (s.batch.empty() && !vector && b.rng.chance(0.3)) rhs_batch = {b.random_dim()};
  const nx::Shape rhs = vector ? joined(rhs_batch, {s.n}) : joined(rhs_batch, {s.n, b.random_dim()});
  const int y = b.fit(b.pick_any(), Type{s.dtype, rhs});
  nx::Shape shape;
  broadcast(s.batch, rhs_batch, &shape);
  shape.insert(shape.end(), rhs.end() - (vector ? 1 : 2), rhs.end());
  b.emit(make_op(Kind::solve, {a, y}), Type{s.dtype, shape});
  return true;
}

bool inv(Builder& b) {
  const System s = random_system(b, true);
  const int a = conditioned(b, s.dtype, s.batch, s.n, false);
  b.emit(make_op(Kind::inv, {a}), b.type(a));
  return true;
}

// Real dtypes only: nx has no conjugate to make a complex matrix Hermitian.
bool cholesky(Builder& b) {
  const System s = random_system(b, false);
  const int a = conditioned(b, s.dtype, s.batch, s.n, true);
  b.emit(make_op(Kind::cholesky, {a}), b.type(a));
  return true;
}

const Generator generators[] = {
    {"matmul", 3, matmul}, {"dot", 1, dot}, {"solve", 1, solve}, {"inv", 1, inv}, {"cholesky", 1, cholesky},
};

}  // namespace

std::span<const Generator> linalg_generators() { return generators; }

}  // namespace gen
