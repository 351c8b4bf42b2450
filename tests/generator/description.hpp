// A generated case: a function described as operations over numbered values
// (a block), and the arguments to call it on. Plain data: evaluate.hpp runs a
// description with nx calls, eagerly or under any trace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rune/nx.hpp>

namespace gen {

struct Type {
  nx::DType dtype = nx::float64;
  nx::Shape shape;
  bool operator==(const Type&) const = default;
};

// What an operation calls (evaluate.cpp). The comment names the fields it reads
// besides `in`.
enum class Kind : std::uint8_t {
  constant,              // constant
  unary,                 // fn: unary_functions()
  binary,                // fn: binary_functions()
  binary_scalar,         // fn, value (the double operand), flag (the double comes first)
  where,                 // in: condition, a, b
  where_scalar,          // value, flag (the double is a, else b); in: condition, the tensor
  cast,                  // dtype
  clamp,                 // value (lo), upper
  reduce,                // fn: reduce_functions(), axes, flag (keepdims)
  arg,                   // fn: arg_functions(), axis
  reshape,               // shape
  transpose,             // axes (the permutation; empty reverses)
  broadcast,             // shape
  expand_dims,           // axes
  squeeze,               // axes
  moveaxis,              // axis (from), to
  flatten,               //
  slice,                 // starts, stops, steps
  pad,                   // widths, value (the fill)
  concatenate,           // axis
  stack,                 // axis
  flip,                  // axes
  get,                   // axis (the row)
  take,                  // axis; in: tensor, indices
  scatter_add,           // axis; in: target, indices, updates
  segment_sum,           // axis (the number of segments); in: data, segment ids
  dynamic_slice,         // shape (sizes); in: tensor, starts
  dynamic_update_slice,  // in: tensor, update, starts
  matmul,                //
  dot,                   //
  solve,                 //
  inv,                   //
  cholesky,              //
  detach,                //
  random,                // fn: RandomFn, dtype, shape, value (lo), upper (hi), axis (split's n); in: the key
  scan,                  // step, carries, xs; in: init..., xs..., captures...
  iterate,               // blocks (until, step), max, carries, xs (until's captures); in: init..., until's captures..., step's captures...
  cond,                  // blocks (then, else); in: pred, captures...
  switch_,               // blocks (the branches); in: index, captures...
  remat,                 // blocks (the body), carries (its arguments); in: arguments..., captures...
  collect,               // blocks (the body); in: zero, captures...; out: the body's results, then the total
  total_add,             // axis (which open collect's total: 0 the outermost); in: the value; no results
  map,                   // blocks (the body), carries (the mapped operands), axis (the lane count); in: mapped..., captures...
  lanes,                 // in: a parameter of the enclosing map's body; every lane's value of it (rune::lanes)
  check,                 // in: a bool scalar; nx::check that it holds; no results
};

// What a random operation draws (nx::random).
enum class RandomFn : std::uint8_t { uniform, normal, split, bits };

struct Block;

struct Op {
  Kind kind = Kind::constant;
  std::vector<int> in;   // operands: values of the block
  std::vector<int> out;  // results: the next values of the block
  int fn = 0;
  nx::DType dtype = nx::float64;
  nx::Shape shape, starts, stops, steps;
  nx::Axes axes;
  std::vector<std::pair<std::int64_t, std::int64_t>> widths;
  double value = 0, upper = 0;
  bool flag = false;
  std::int64_t axis = 0, to = 0;
  nx::Tensor constant;
  std::shared_ptr<const Block> step;  // a scan's step: carries, rows of xs, captures -> carries, ys
  int carries = 0, xs = 0;
  // The other constructs' functions. iterate: until (carries, until's
  // captures -> a bool scalar) and step (carries, step's captures ->
  // carries); cond, switch_: the branches (captures -> results of the same
  // types); remat: the body (arguments, captures -> results); collect: the
  // body (captures -> results), which may add to the total; map: the body
  // (a lane of each mapped operand, captures -> a lane of each result).
  std::vector<std::shared_ptr<const Block>> blocks;
  std::int64_t max = 0;  // iterate: the most steps
};

// A function body: parameters are its first values, each operation defines
// the next ones.
struct Block {
  std::vector<Type> types;  // of every value
  int params = 0;
  std::vector<Op> ops;
  std::vector<int> results;
};

struct Case {
  std::uint64_t seed = 0;
  Block function;
  std::vector<nx::Tensor> args;
  // float64 arguments and results, domains kept smooth: the gradient is checked.
  bool gradient = false;
  // The error every route must throw (a scan over 0 rows, which the API
  // refuses; an iterate whose until still is false after max steps).
  std::optional<std::string> error;
  // Generated so far (gradient cases hold a remat or a collect, not both:
  // see constructs.cpp).
};

}  // namespace gen
