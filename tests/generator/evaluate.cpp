#include "evaluate.hpp"

#include <functional>

#include <rune/check.hpp>
#include <rune/cond.hpp>
#include <rune/grad.hpp>
#include <rune/iterate.hpp>
#include <rune/random.hpp>
#include <rune/remat.hpp>
#include <rune/scan.hpp>
#include <rune/total.hpp>
#include <rune/vmap.hpp>

#include "functions.hpp"

namespace gen {

namespace {

using nx::Tensor;
using Values = std::vector<Tensor>;

// A map running around a block: its name and its whole mapped operands.
struct Map {
  rune::Axis axis;
  Values whole;
};
// What runs around a block: the totals of the collects open (outermost
// first), the maps (innermost last), and whether maps run as rune::vmap or
// as loops over their lanes (the oracle of vmap).
struct Around {
  std::vector<const rune::Total*> totals;
  std::vector<Map> maps;
  bool loops = false;
};

Values evaluate_in(const Block& block, std::span<const Tensor> params, const Around& around);

Values with(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Around with_total(Around around, const rune::Total* total) {
  around.totals.push_back(total);
  return around;
}

Values operands(const Op& op, const Values& env, std::size_t from, std::size_t count) {
  Values out;
  for (std::size_t i = from; i < from + count; ++i) out.push_back(env[std::size_t(op.in[i])]);
  return out;
}

// The step reads its captures from the enclosing values, as a C++ lambda
// would: eagerly they become constants of the step's program, under a trace
// captures of it.
Values scan(const Op& op, const Values& env, const Around& around) {
  const auto carries = std::size_t(op.carries), xs = std::size_t(op.xs);
  const Values captured = operands(op, env, carries + xs, op.in.size() - carries - xs);
  auto step = [&](const Values& carry, const Values& row) {
    Values in = carry;
    in.insert(in.end(), row.begin(), row.end());
    in.insert(in.end(), captured.begin(), captured.end());
    Values out = evaluate_in(*op.step, in, around);
    return std::pair{Values(out.begin(), out.begin() + op.carries), Values(out.begin() + op.carries, out.end())};
  };
  auto [carry, ys] = rune::scan(step, operands(op, env, 0, carries), operands(op, env, carries, xs));
  carry.insert(carry.end(), ys.begin(), ys.end());
  return carry;
}

// Until and the step read their captures as the scan's step does.
Values iterate(const Op& op, const Values& env, const Around& around) {
  const auto carries = std::size_t(op.carries), until_captures = std::size_t(op.xs);
  const Values for_until = operands(op, env, carries, until_captures);
  const Values for_step = operands(op, env, carries + until_captures, op.in.size() - carries - until_captures);
  auto until = [&](const Values& carry) { return evaluate_in(*op.blocks[0], with(carry, for_until), around)[0]; };
  auto step = [&](const Values& carry) { return evaluate_in(*op.blocks[1], with(carry, for_step), around); };
  return rune::iterate(op.max, until, step, operands(op, env, 0, carries));
}

Values choose(const Op& op, const Values& env, const Around& around) {
  const Values captured = operands(op, env, 1, op.in.size() - 1);
  auto branch = [&](std::size_t k) {
    return [&, k] { return evaluate_in(*op.blocks[k], captured, around); };
  };
  const Tensor& chooser = env[std::size_t(op.in[0])];
  if (op.kind == Kind::cond) return rune::cond(chooser, branch(0), branch(1));
  std::vector<std::function<Values()>> branches;
  for (std::size_t k = 0; k < op.blocks.size(); ++k) branches.push_back(branch(k));
  return rune::switch_(chooser, branches);
}

Values remat(const Op& op, const Values& env, const Around& around) {
  const auto args = std::size_t(op.carries);
  const Values captured = operands(op, env, args, op.in.size() - args);
  auto body = [&](const Values& a) { return evaluate_in(*op.blocks[0], with(a, captured), around); };
  return rune::remat(body)(operands(op, env, 0, args));
}

// A fresh total per execution of the description: its body's adds (and
// those of constructs inside it) name it by its place among the open ones.
Values collect(const Op& op, const Values& env, const Around& around) {
  const rune::Total total;
  const Around inside = with_total(around, &total);
  const Values captured = operands(op, env, 1, op.in.size() - 1);
  auto [results, sum] =
      rune::collect(total, env[std::size_t(op.in[0])], [&] { return evaluate_in(*op.blocks[0], captured, inside); });
  results.push_back(sum);
  return results;
}

void check(const Tensor& holds) {
  nx::check(holds, holds, [](const nx::Index&, const Tensor&) {
    return std::make_exception_ptr(std::invalid_argument("gen: a generated check failed"));
  });
}

// Every lane's value of a parameter of the innermost map's body: what
// rune::lanes gathers, or, run as loops, the whole operand.
Tensor lanes(const Op& op, const Values& env, const Around& around) {
  const Map& map = around.maps.back();
  if (around.loops) return map.whole[std::size_t(op.in[0])];
  return rune::lanes(map.axis, env[std::size_t(op.in[0])]);
}

// rune::vmap of the body over axis 0 of the mapped operands, or (the
// oracle) the body on each lane in turn, its results stacked.
Values map(const Op& op, const Block& block, const Values& env, const Around& around) {
  const auto mapped = std::size_t(op.carries);
  Around inside = around;
  inside.maps.push_back({rune::axis(), operands(op, env, 0, mapped)});
  const Values& whole = inside.maps.back().whole;
  const Values captured = operands(op, env, mapped, op.in.size() - mapped);
  auto body = [&](const Values& lane) { return evaluate_in(*op.blocks[0], with(lane, captured), inside); };
  if (!around.loops) return rune::vmap(body, inside.maps.back().axis)(whole);
  std::vector<Values> rows(op.out.size());
  for (std::int64_t i = 0; i < op.axis; ++i) {
    Values lane;
    for (const Tensor& w : whole) lane.push_back(nx::get(w, i));
    const Values out = body(lane);
    for (std::size_t k = 0; k < out.size(); ++k) rows[k].push_back(out[k]);
  }
  Values results;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Type& t = block.types[std::size_t(op.out[k])];
    results.push_back(rows[k].empty() ? nx::zeros(t.dtype, t.shape) : nx::stack(rows[k], 0));
  }
  return results;
}

Values construct(const Op& op, const Block& block, const Values& env, const Around& around) {
  if (op.kind == Kind::map) return map(op, block, env, around);
  switch (op.kind) {
    case Kind::scan: return scan(op, env, around);
    case Kind::iterate: return iterate(op, env, around);
    case Kind::remat: return remat(op, env, around);
    case Kind::collect: return collect(op, env, around);
    case Kind::total_add: around.totals[std::size_t(op.axis)]->add(env[std::size_t(op.in[0])]); return {};
    case Kind::check: check(env[std::size_t(op.in[0])]); return {};
    case Kind::lanes: return {lanes(op, env, around)};
    default: return choose(op, env, around);
  }
}

bool is_construct(Kind kind) {
  return kind == Kind::scan || kind == Kind::iterate || kind == Kind::cond || kind == Kind::switch_ ||
         kind == Kind::remat || kind == Kind::collect || kind == Kind::total_add || kind == Kind::check ||
         kind == Kind::lanes || kind == Kind::map;
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

Values evaluate_in(const Block& block, std::span<const Tensor> params, const Around& around) {
  Values env(block.types.size());
  std::copy(params.begin(), params.end(), env.begin());
  for (const Op& op : block.ops) {
    Values out = is_construct(op.kind) ? construct(op, block, env, around) : Values{single(op, env)};
    for (std::size_t k = 0; k < out.size(); ++k) env[std::size_t(op.out[k])] = out[k];
  }
  Values results;
  for (int v : block.results) results.push_back(env[std::size_t(v)]);
  return results;
}

}  // namespace

std::vector<Tensor> evaluate(const Block& block, std::span<const Tensor> params) { return evaluate_in(block, params, {}); }

std::vector<Tensor> evaluate_unmapped(const Block& block, std::span<const Tensor> params) {
  Around loops;
  loops.loops = true;
  return evaluate_in(block, params, loops);
}

bool holds(const Block& block, Kind kind, bool in_map) {
  for (const Op& op : block.ops) {
    if ((op.kind == kind && !in_map) || (op.step && holds(*op.step, kind, in_map))) return true;
    for (const auto& sub : op.blocks)
      if (holds(*sub, kind, in_map && op.kind != Kind::map)) return true;
  }
  return false;
}

}  // namespace gen
