#include "ir/program.hpp"

#include <cstring>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/sizes.hpp"

namespace rune::ir {

namespace {
bool same_constant(const nx::Tensor& a, const nx::Tensor& b) {
  if (nx::ops::type_of(a) != nx::ops::type_of(b)) return false;
  nx::Tensor ca = nx::ops::contiguous(a), cb = nx::ops::contiguous(b);
  return std::memcmp(nx::ops::data_of<char>(ca), nx::ops::data_of<char>(cb),
                     std::size_t(a.numel()) * nx::size_of(a.dtype())) == 0;
}

bool equal(const Equation& a, const Equation& b) {
  if (a.kind != b.kind || a.inputs != b.inputs || a.outputs != b.outputs) return false;
  switch (a.kind) {
    case OpKind::primitive: return a.prim == b.prim && a.params == b.params;
    case OpKind::constant: return same_constant(a.constant, b.constant);
    case OpKind::scan:
      return a.scan == b.scan && a.programs.size() == b.programs.size() && equal(*a.programs[0], *b.programs[0]);
    case OpKind::linear_call: return a.call == b.call;
    case OpKind::check: return a.check == b.check;
    case OpKind::callback: return a.host == b.host;
    case OpKind::custom: return a.rule == b.rule;
  }
  return false;
}
}  // namespace

bool equal(const Program& a, const Program& b) {
  if (a.types != b.types || a.params != b.params || a.results != b.results ||
      a.equations.size() != b.equations.size())
    return false;
  for (std::size_t i = 0; i < a.equations.size(); ++i)
    if (!equal(a.equations[i], b.equations[i])) return false;
  return true;
}

namespace {
std::vector<TensorType> scan_output_types(const Equation& eq, const std::vector<TensorType>& in) {
  const ScanInfo& s = eq.scan;
  const Program& step = *eq.programs.at(0);
  auto fail = [](const std::string& m) { nx::ops::fail("rune::scan", m); };
  if (in.size() + 0 != step.params.size() || s.carry_count + s.xs_count > int(in.size()))
    fail("the step takes " + std::to_string(step.params.size()) + " values, the scan gives " +
         std::to_string(in.size()));
  for (std::size_t i = 0; i < in.size(); ++i) {
    TensorType want = step.types[std::size_t(step.params[i])];
    TensorType given = in[i];
    if (int(i) >= s.carry_count && int(i) < s.carry_count + s.xs_count) {
      if (given.shape.empty() || given.shape[0] != s.length)
        fail("xs value " + std::to_string(i - std::size_t(s.carry_count)) + " is " + nx::ops::to_string(given) +
             ", not " + std::to_string(s.length) + " rows");
      given.shape.erase(given.shape.begin());
    }
    if (want != given)
      fail("input " + std::to_string(i) + " is " + nx::ops::to_string(given) + ", the step takes " +
           nx::ops::to_string(want));
  }
  if (step.results.size() < std::size_t(s.carry_count))
    fail("the step returns " + std::to_string(step.results.size()) + (step.results.size() == 1 ? " value" : " values") +
         ", fewer than the " + std::to_string(s.carry_count) + " of the carry");
  std::vector<TensorType> out;
  for (std::size_t r = 0; r < step.results.size(); ++r) {
    TensorType t = step.types[std::size_t(step.results[r])];
    if (int(r) < s.carry_count) {
      if (t != in[r])
        fail("the step returns carry " + std::to_string(r) + " as " + nx::ops::to_string(t) + ", it receives " +
             nx::ops::to_string(in[r]));
    } else {
      t.shape.insert(t.shape.begin(), s.length);
      nx::ops::check_shape("rune::scan", t.shape);
    }
    out.push_back(t);
  }
  return out;
}
}  // namespace

std::vector<TensorType> construct_output_types(const Equation& eq, const std::vector<TensorType>& inputs) {
  switch (eq.kind) {
    case OpKind::scan: return scan_output_types(eq, inputs);
    case OpKind::linear_call: return eq.call->output_types;
    case OpKind::callback: return eq.host->output_types;
    case OpKind::custom: {
      std::vector<TensorType> out;
      for (int v : eq.programs.at(0)->results) out.push_back(eq.programs[0]->types[std::size_t(v)]);
      return out;
    }
    default: return {};
  }
}

}  // namespace rune::ir
