#include "evaluate.hpp"

#include <functional>

#include <rune/cond.hpp>
#include <rune/grad.hpp>
#include <rune/iterate.hpp>
#include <rune/random.hpp>
#include <rune/remat.hpp>
#include <rune/scan.hpp>
#include <rune/total.hpp>

#include "functions.hpp"

namespace gen {

namespace {

using nx::Tensor;
using Values = std::vector<Tensor>;
// The totals of the collects running around a block, outermost first.
using Totals = std::vector<const rune::Total*>;

Values evaluate_in(const Block& block, std::span<const Tensor> params, const Totals& totals);

Values with(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Totals with_total(Totals open, const rune::Total* total) {
  open.push_back(total);
  return open;
}

Values operands(const Op& op, const Values& env, std::size_t from, std::size_t count) {
  Values out;
  for (std::size_t i = from; i < from + count; ++i) out.push_back(env[std::size_t(op.in[i])]);
  return out;
}

// The step reads its captures from the enclosing values, as a C++ lambda
// would: eagerly they become constants of the step's program, under a trace
// captures of it.
Values scan(const Op& op, const Values& env, const Totals& totals) {
  const auto carries = std::size_t(op.carries), xs = std::size_t(op.xs);
  const Values captured = operands(op, env, carries + xs, op.in.size() - carries - xs);
  auto step = [&](const Values& carry, const Values& row) {
    Values in = carry;
    in.insert(in.end(), row.begin(), row.end());
    in.insert(in.end(), captured.begin(), captured.end());
    Values out = evaluate_in(*op.step, in, totals);
    return std::pair{Values(out.begin(), out.begin() + op.carries), Values(out.begin() + op.carries, out.end())};
  };
  auto [carry, ys] = rune::scan(step, operands(op, env, 0, carries), operands(op, env, carries, xs));
  carry.insert(carry.end(), ys.begin(), ys.end());
  return carry;
}

// Until and the step read their captures as the scan's step does.
Values iterate(const Op& op, const Values& env, const Totals& totals) {
  const auto carries = std::size_t(op.carries), until_captures = std::size_t(op.xs);
  const Values for_until = operands(op, env, carries, until_captures);
  const Values for_step = operands(op, env, carries + until_captures, op.in.size() - carries - until_captures);
  auto until = [&](const Values& carry) { return evaluate_in(*op.blocks[0], with(carry, for_until), totals)[0]; };
  auto step = [&](const Values& carry) { return evaluate_in(*op.blocks[1], with(carry, for_step), totals); };
  return rune::iterate(op.max, until, step, operands(op, env, 0, carries));
}

Values choose(const Op& op, const Values& env, const Totals& totals) {
  const Values captured = operands(op, env, 1, op.in.size() - 1);
  auto branch = [&](std::size_t k) {
    return [&, k] { return evaluate_in(*op.blocks[k], captured, totals); };
  };
  const Tensor& chooser = env[std::size_t(op.in[0])];
  if (op.kind == Kind::cond) return rune::cond(chooser, branch(0), branch(1));
  std::vector<std::function<Values()>> branches;
  for (std::size_t k = 0; k < op.blocks.size(); ++k) branches.push_back(branch(k));
  return rune::switch_(chooser, branches);
}

Values remat(const Op& op, const Values& env, const Totals& totals) {
  const auto args = std::size_t(op.carries);
  const Values captured = operands(op, env, args, op.in.size() - args);
  auto body = [&](const Values& a) { return evaluate_in(*op.blocks[0], with(a, captured), totals); };
  return rune::remat(body)(operands(op, env, 0, args));
}

// A fresh total per execution of the description: its body's adds (and
// those of constructs inside it) name it by its place among the open ones.
Values collect(const Op& op, const Values& env, const Totals& totals) {
  const rune::Total total;
  const Totals inside = with_total(totals, &total);
  const Values captured = operands(op, env, 1, op.in.size() - 1);
  auto [results, sum] =
      rune::collect(total, env[std::size_t(op.in[0])], [&] { return evaluate_in(*op.blocks[0], captured, inside); });
  results.push_back(sum);
  return results;
}

Values construct(const Op& op, const Values& env, const Totals& totals) {
  switch (op.kind) {
    case Kind::scan: return scan(op, env, totals);
    case Kind::iterate: return iterate(op, env, totals);
    case Kind::remat: return remat(op, env, totals);
    case Kind::collect: return collect(op, env, totals);
    case Kind::total_add: totals[std::size_t(op.axis)]->add(env[std::size_t(op.in[0])]); return {};
    default: return choose(op, env, totals);
  }
}

bool is_construct(Kind kind) {
  return kind == Kind::scan || kind == Kind::iterate || kind == Kind::cond || kind == Kind::switch_ ||
         kind == Kind::remat || kind == Kind::collect || kind == Kind::total_add;
}

Tensor layout(const Op& op, const Values& env) {
  const Tensor& x = env[std::size_t(op.in[0])];
  switch (op.kind) {
    case Kind::reshape: return nx::reshape(x, op.shape);
    case Kind::transpose: return nx::transpose(x, op.axes);
    case Kind::broadcast: return nx::broadcast_to(x, op.shape);
    case Kind::expand_dims: return nx::expand_dims(x, op.axes);
    case Kind::squeeze: return nx::squeeze(x, op.axes);
    case Kind::moveaxis: return nx::moveaxis(x, op.axis, op.to);
    case Kind::flatten: return nx::flatten(x);
    case Kind::slice: return nx::slice(x, op.starts, op.stops, op.steps);
    case Kind::pad: return nx::pad(x, op.widths, op.value);
    case Kind::concatenate: return nx::concatenate(operands(op, env, 0, op.in.size()), op.axis);
    case Kind::stack: return nx::stack(operands(op, env, 0, op.in.size()), op.axis);
    case Kind::flip: return nx::flip(x, op.axes);
    case Kind::get: return nx::get(x, op.axis);
    case Kind::take: return nx::take(x, env[std::size_t(op.in[1])], op.axis);
    case Kind::scatter_add: return nx::scatter_add(x, env[std::size_t(op.in[1])], env[std::size_t(op.in[2])], op.axis);
    case Kind::segment_sum: return nx::segment_sum(x, env[std::size_t(op.in[1])], op.axis);
    case Kind::dynamic_slice: return nx::dynamic_slice(x, env[std::size_t(op.in[1])], op.shape);
    default: return nx::dynamic_update_slice(x, env[std::size_t(op.in[1])], env[std::size_t(op.in[2])]);
  }
}

Tensor draw(const Op& op, const Tensor& key) {
  switch (RandomFn(op.fn)) {
    case RandomFn::uniform: return nx::random::uniform(key, op.dtype, op.shape, op.value, op.upper);
    case RandomFn::normal: return nx::random::normal(key, op.dtype, op.shape);
    case RandomFn::split: return nx::random::split(key, op.axis);
    default: return nx::random::bits(key, op.shape);
  }
}

Tensor single(const Op& op, const Values& env) {
  auto x = [&](std::size_t i) -> const Tensor& { return env[std::size_t(op.in[i])]; };
  switch (op.kind) {
    case Kind::constant: return op.constant;
    case Kind::unary: return unary_functions()[std::size_t(op.fn)].f(x(0));
    case Kind::binary: return binary_functions()[std::size_t(op.fn)].f(x(0), x(1));
    case Kind::binary_scalar: {
      const BinaryFunction& f = binary_functions()[std::size_t(op.fn)];
      return op.flag ? f.scalar_first(op.value, x(0)) : f.scalar_second(x(0), op.value);
    }
    case Kind::where: return nx::where(x(0), x(1), x(2));
    case Kind::where_scalar: return op.flag ? nx::where(x(0), op.value, x(1)) : nx::where(x(0), x(1), op.value);
    case Kind::cast: return nx::cast(x(0), op.dtype);
    case Kind::clamp: return nx::clamp(x(0), op.value, op.upper);
    case Kind::reduce: return reduce_functions()[std::size_t(op.fn)].f(x(0), op.axes, op.flag);
    case Kind::arg: return arg_functions()[std::size_t(op.fn)].f(x(0), op.axis);
    case Kind::matmul: return nx::matmul(x(0), x(1));
    case Kind::dot: return nx::dot(x(0), x(1));
    case Kind::solve: return nx::solve(x(0), x(1));
    case Kind::inv: return nx::inv(x(0));
    case Kind::cholesky: return nx::cholesky(x(0));
    case Kind::detach: return rune::detach(x(0));
    case Kind::random: return draw(op, x(0));
    default: return layout(op, env);
  }
}

Values evaluate_in(const Block& block, std::span<const Tensor> params, const Totals& totals) {
  Values env(block.types.size());
  std::copy(params.begin(), params.end(), env.begin());
  for (const Op& op : block.ops) {
    Values out = is_construct(op.kind) ? construct(op, env, totals) : Values{single(op, env)};
    for (std::size_t k = 0; k < out.size(); ++k) env[std::size_t(op.out[k])] = out[k];
  }
  Values results;
  for (int v : block.results) results.push_back(env[std::size_t(v)]);
  return results;
}

}  // namespace

std::vector<Tensor> evaluate(const Block& block, std::span<const Tensor> params) { return evaluate_in(block, params, {}); }

}  // namespace gen
