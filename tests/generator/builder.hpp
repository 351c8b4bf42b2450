// Builds one block of a case: keeps the type of every value (the
// generator's own model of the nx type rules), picks operands, and emits
// operations. The generators of each family (elementwise.cpp, shape.cpp,
// indexing.cpp, linalg.cpp, scan.cpp, constructs.cpp) add one operation at a
// time through it.
#pragma once

#include <functional>
#include <span>

#include "description.hpp"
#include "functions.hpp"
#include "rng.hpp"

namespace gen {

// Constructs inside constructs: two levels at most.
constexpr int max_depth = 2;

class Builder {
 public:
  Builder(Rng& rng, Case& c, Block& block, int depth) : rng(rng), c(c), depth(depth), block_(block) {}

  Rng& rng;
  Case& c;          // its mode, and the error it must throw
  const int depth;  // constructs around this block
  // The types of the totals of the collects open around this block,
  // outermost first: a total_add may add to any of them.
  std::vector<Type> totals;

  bool gradient() const { return c.gradient; }
  const Type& type(int v) const { return block_.types[std::size_t(v)]; }
  int values() const { return int(block_.types.size()); }
  // How many operations of that kind the block holds so far.
  int count(Kind kind) const;

  // Appends op, whose results have these types; gives its first result.
  int emit(Op op, std::span<const Type> outs);
  int emit(Op op, const Type& out) { return emit(std::move(op), std::span<const Type>(&out, 1)); }
  // Appends `count` random operations.
  void grow(int count);
  // A builder of a block one construct deeper, with the same totals open.
  Builder nested(Block& block) const;

  // A value whose type satisfies `fits`, recent ones preferred; -1 if none.
  int pick(const std::function<bool(const Type&)>& fits);
  int pick_any() { return pick([](const Type&) { return true; }); }
  // The values made by operations that no operation reads; the last value
  // when every one is read (or none was made).
  std::vector<int> unread() const;

  // Emitting helpers: each gives the value it made. (Types are taken by
  // value: a caller's may refer to the block's, which emitting moves.)
  int constant(const nx::Tensor& t);
  int cast(int v, nx::DType dtype);  // v itself when it has the dtype
  int fit(int v, Type target);       // a value of the target type computed from v
  int guard(int v, Domain domain);     // gradient cases: v squashed into the domain
  int call_unary(std::string_view name, int v);
  int call_scalar(std::string_view name, int v, double value);  // name(v, value)
  int call_binary(std::string_view name, int a, int b);
  // A value of type `want`: one of the block's (often the newest), or one
  // made to fit.
  int provide(Type want);
  // v reduced over every axis to a scalar: any or all of a bool, the sum,
  // max, min or mean (as its dtype takes) of a number, the abs of a complex.
  int reduction(int v);
  // A bool scalar: a comparison of v's reduction with a threshold (a random
  // double, or the value `threshold` when it is not -1), or a bool's any/all.
  int predicate(int v, int threshold = -1);

  nx::DType random_dtype();
  nx::Shape random_shape(int max_rank = 4);
  // Lengths: mostly 1 to 4, sometimes 0, sometimes longer than a SIMD batch.
  std::int64_t random_dim();

 private:
  int first_elements(int v, nx::Shape shape);  // v's first elements in that shape
  int spread_sum(int v, Type target);          // v's sum broadcast to the shape
  Block& block_;
};

inline Op make_op(Kind kind, std::vector<int> in) {
  Op op;
  op.kind = kind;
  op.in = std::move(in);
  return op;
}
inline std::int64_t rank_of(const Builder& b, int v) { return std::int64_t(b.type(v).shape.size()); }

// Index of an nx function in its table (functions.hpp).
int unary_index(std::string_view name);
int binary_index(std::string_view name);
int reduce_index(std::string_view name);

// Shapes as NumPy broadcasts them; false when they do not.
bool broadcast(const nx::Shape& a, const nx::Shape& b, nx::Shape* out = nullptr);
// The axis as the generator writes it: sometimes counted from the end.
inline std::int64_t written(Rng& rng, std::int64_t axis, std::int64_t rank) {
  return rng.chance(0.3) ? axis - rank : axis;
}

}  // namespace gen
