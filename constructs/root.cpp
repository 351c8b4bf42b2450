// rune::root: the point solve() found, stated to be a zero of the residual.
// Its value is the point; its derivative comes from the implicit function
// theorem: with F(x, c) = 0 at the point x for the residual's captures c,
// dx = -(dF/dx)^-1 (dF/dc dc). dF/dc dc is the residual's forward
// derivative at the point through the captures' tangents; dF/dx is applied
// as the residual's forward derivative along x (the operator given to the
// user's linear solve), or built column by column and solved by nx::solve.
// The solve is linear in its right-hand side, so linearization records it
// in the linear program (and its transpose solves with dF/dx transposed).
#include "ad/jvp_trace.hpp"
#include "constructs/batched_program.hpp"
#include "constructs/table.hpp"
#include "ir/eval.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"
#include "rune/root.hpp"

namespace rune::constructs {

namespace {

using nx::Tensor;

const ir::RootInfo& info(const ir::Equation& eq) { return std::get<ir::RootInfo>(eq.info); }

std::int64_t elements(std::span<const ir::TensorType> types) {
  std::int64_t n = 0;
  for (const ir::TensorType& t : types) n += nx::numel(t.shape);
  return n;
}

// "float64 [2]", or "(float64 [2], float32 [])" for several values.
std::string types_text(std::span<const ir::TensorType> types) {
  std::string text;
  for (const ir::TensorType& t : types) text += (text.empty() ? "" : ", ") + nx::ops::to_string(t);
  return types.size() == 1 ? text : "(" + text + ")";
}

std::vector<ir::TensorType> output_types(const ir::Equation& eq, std::span<const ir::TensorType> in) {
  auto fail = [](const std::string& m) { nx::ops::fail("rune::root", m); };
  if (eq.programs.size() != 1) fail("a root has one residual program, not " + std::to_string(eq.programs.size()));
  const ir::Program& residual = *eq.programs[0];
  const auto points = std::size_t(info(eq).point_count);
  if (points > in.size()) fail("the point has more values than the root's inputs");
  if (residual.params.size() != in.size())
    fail("the residual takes " + std::to_string(residual.params.size()) + " values, the root gives " +
         std::to_string(in.size()));
  for (std::size_t k = 0; k < in.size(); ++k)
    if (residual.types[std::size_t(residual.params[k])] != in[k])
      fail("the residual takes " + nx::ops::to_string(residual.types[std::size_t(residual.params[k])]) +
           " as value " + std::to_string(k) + ", the root gives " + nx::ops::to_string(in[k]));
  std::vector<ir::TensorType> point(in.begin(), in.begin() + long(points)), values;
  if (point.empty()) fail("the point holds no value");
  for (int v : residual.results) values.push_back(residual.types[std::size_t(v)]);
  if (elements(values) != elements(point))
    fail("the residual gives " + std::to_string(elements(values)) + " elements at a point of " +
         std::to_string(elements(point)));
  for (const ir::TensorType& t : point)
    if (t.dtype != point[0].dtype || !nx::is_inexact(t.dtype))
      fail("the point's values must share one real or complex dtype, got " + nx::ops::to_string(t));
  // (the derivative solves the residual's Jacobian with its right-hand side in one dtype)
  for (const ir::TensorType& t : values)
    if (t.dtype != point[0].dtype)
      fail("the residual returns " + types_text(values) + " where the point is " + types_text(point));
  return point;
}

// The values of a structure's leaves laid end to end, and back.
Tensor flat(std::span<const Tensor> leaves) {
  std::vector<Tensor> rows;
  for (const Tensor& t : leaves) rows.push_back(nx::reshape(t, {t.numel()}));
  return nx::concatenate(rows);
}
std::vector<Tensor> unflat(const Tensor& all, std::span<const Tensor> like) {
  std::vector<Tensor> out;
  std::int64_t at = 0;
  for (const Tensor& t : like) {
    out.push_back(nx::reshape(nx::slice(all, {at}, {at + t.numel()}), t.shape()));
    at += t.numel();
  }
  return out;
}

// dF/dx applied along v: the residual's forward derivative at the point.
std::vector<Tensor> jacobian_along(const ir::Program& residual, std::span<const Tensor> point,
                                   std::span<const Tensor> captures, std::span<const Tensor> v) {
  ad::JvpTrace forward("rune::root");
  nx::ops::TraceScope scope(forward);
  std::vector<Tensor> args;
  for (std::size_t k = 0; k < point.size(); ++k) args.push_back(forward.wrap(point[k], v[k]));
  args.insert(args.end(), captures.begin(), captures.end());
  std::vector<Tensor> out;
  for (const Tensor& r : ir::evaluate(residual, args)) {
    Tensor t = forward.tangent_of(r);
    out.push_back(t.defined() ? t : nx::zeros_like(forward.primal_of(r)));
  }
  return out;
}

// dF/dx as a matrix, built column by column ([0, 0] at a point of no
// elements: a map of no lanes).
Tensor jacobian_matrix(const ir::Program& residual, std::span<const Tensor> point, std::span<const Tensor> captures) {
  const Tensor x = flat(point);
  const std::int64_t size = x.numel();
  if (size == 0) return nx::zeros(x.dtype(), {0, 0});
  const Tensor basis = nx::eye(x.dtype(), size);
  std::vector<Tensor> columns;
  for (std::int64_t j = 0; j < size; ++j)
    columns.push_back(flat(jacobian_along(residual, point, captures, unflat(nx::get(basis, j), point))));
  return nx::stack(columns, 1);
}

std::vector<Tensor> jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  const auto n = std::size_t(info(eq).point_count);
  std::vector<Tensor> primals;
  bool tangents = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    primals.push_back(trace.primal_of(inputs[i]));
    tangents = tangents || (i >= n && trace.tangent_of(inputs[i]).defined());  // (solve is not differentiated)
  }
  const std::vector<Tensor> point = ir::bind_construct(eq, primals, "rune::root");
  if (!tangents) return point;
  ir::Replay derivative;  // (the residual is computed again: no add to a total)
  const ir::Program& residual = *eq.programs[0];
  const std::span<const Tensor> captures = std::span<const Tensor>(primals).subspan(n);

  // The right-hand side: -dF/dc dc, at the point.
  std::vector<Tensor> at(point.begin(), point.end());
  at.insert(at.end(), inputs.begin() + long(n), inputs.end());
  std::vector<Tensor> rhs;
  for (const Tensor& r : ir::evaluate(residual, at)) {
    const Tensor t = trace.tangent_of(r);
    rhs.push_back(t.defined() ? -t : nx::zeros_like(trace.primal_of(r)));
  }

  std::vector<Tensor> dx;
  if (const auto& solver = info(eq).linear_solve) {
    detail::LinearOperator op = [&](std::span<const Tensor> v) { return jacobian_along(residual, point, captures, v); };
    dx = solver->solve(op, rhs);
  } else {
    const std::int64_t size = flat(point).numel();
    const Tensor jacobian = jacobian_matrix(residual, point, captures);
    dx = unflat(nx::reshape(nx::solve(jacobian, nx::reshape(flat(rhs), {size, 1})), {size}), point);
  }
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(trace.wrap(point[k], dx[k]));
  return out;
}

// Under vmap: one root of the residual over every lane (the point batched).
std::vector<Tensor> batched(batch::BatchTrace& trace, const ir::Equation& eq, std::span<const Tensor> inputs) {
  LaneInputs in = lane_inputs(trace, inputs, std::size_t(info(eq).point_count));
  const std::vector<bool> every(eq.programs[0]->results.size(), true);
  BatchedProgram residual = batch_program(trace, *eq.programs[0], types_of(in.values), in.batched, every);
  ir::Equation root = eq;
  root.programs = {residual.program};
  in.values.insert(in.values.end(), residual.captures.begin(), residual.captures.end());
  std::vector<Tensor> out = ir::bind_construct(root, in.values, "rune::root");
  for (Tensor& t : out) t = trace.wrap(t);
  return out;
}

}  // namespace

const ir::ConstructRules root_rules = [] {
  ir::ConstructRules r;
  r.entry_point = "rune::root";
  r.text = ir::TextForm{"root", "", {"point", "captures"}, {"residual"}};
  r.holds_code = [](const ir::Equation& eq) { return info(eq).linear_solve != nullptr; };
  r.output_types = output_types;
  r.eager = [](const ir::Equation& eq, std::span<const Tensor> inputs) {
    return std::vector<Tensor>(inputs.begin(), inputs.begin() + info(eq).point_count);
  };
  r.jvp = jvp;
  r.batch = batched;
  r.group_sizes = [](const ir::Equation& eq, std::size_t inputs) {
    return std::vector<int>{info(eq).point_count, int(inputs) - info(eq).point_count};
  };
  r.from_text = [](ir::Equation& eq, std::int64_t, std::span<const int> sizes) { eq.info = ir::RootInfo{sizes[0], {}}; };
  r.param_source = [](const ir::Equation&, std::size_t, std::size_t param, bool* row) {
    *row = false;
    return int(param);
  };
  return r;
}();

}  // namespace rune::constructs

namespace rune::detail {

std::vector<nx::Tensor> bind_root(std::shared_ptr<const ir::Program> residual,
                                  std::shared_ptr<const LinearSolve> linear_solve, int point_count,
                                  std::span<const nx::Tensor> inputs) {
  ir::Equation eq;
  eq.kind = ir::OpKind::root;
  eq.info = ir::RootInfo{point_count, std::move(linear_solve)};
  eq.programs = {std::move(residual)};
  // Typed here, so that a mistake is refused by rune::root eagerly too (the
  // eager rule only gives the point back; a trace types what it records).
  std::vector<ir::TensorType> types;
  for (const nx::Tensor& t : inputs) types.push_back(nx::ops::type_of(t));
  ir::construct_output_types(eq, types);
  return ir::bind_construct(eq, inputs, "rune::root");
}

}  // namespace rune::detail
