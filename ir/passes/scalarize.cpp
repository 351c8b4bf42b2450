#include "ir/passes/scalarize.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "ir/passes/canonical.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"

namespace rune::ir {

namespace {

using nx::DType;
using nx::Shape;
using nx::ops::Family;


TensorType element_type(const TensorType& t) { return {t.dtype, {}, t.placement}; }

// ---- indices, in C order

Shape unravel(std::int64_t i, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

std::int64_t ravel(const Shape& index, const Shape& shape) {
  std::int64_t i = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + index[d];
  return i;
}

// The element of a value of shape `from` that broadcasting it (NumPy's
// rule: trailing axes aligned) puts at `index` of shape `to`.
std::int64_t broadcast_source(const Shape& index, const Shape& from, const Shape& to) {
  const std::size_t shift = to.size() - from.size();
  Shape at(from.size(), 0);
  for (std::size_t d = 0; d < from.size(); ++d) at[d] = from[d] == 1 ? 0 : index[shift + d];
  return ravel(at, from);
}

// ---- which equations compute on parts

bool is_reduction_on_parts(const Equation& eq, const TensorType& in, const TensorType& out) {
  const Prim p = eq.prim;
  const bool combines = p == Prim::reduce_sum || p == Prim::reduce_prod || p == Prim::reduce_max || p == Prim::reduce_min;
  const bool float_row = in.dtype == DType::float32 || in.dtype == DType::float64;
  return combines && float_row && in.dtype == out.dtype && !eq.params.axes.empty();
}

bool is_supported(const Equation& eq, const Program& p) {
  if (eq.kind != OpKind::primitive) return false;
  switch (nx::ops::info(eq.prim).family) {
    case Family::unary:
    case Family::binary:
    case Family::select:
    case Family::convert: return true;
    case Family::reduce:
      return is_reduction_on_parts(eq, p.types[std::size_t(eq.inputs[0])], p.types[std::size_t(eq.outputs[0])]);
    case Family::layout:
      return eq.prim == Prim::reshape || eq.prim == Prim::broadcast || eq.prim == Prim::slice ||
             eq.prim == Prim::transpose || eq.prim == Prim::flip || eq.prim == Prim::concatenate;
    default: return false;
  }
}

bool is_loop(const Equation& eq) { return eq.kind == OpKind::scan || eq.kind == OpKind::iterate; }

int carry_count(const Equation& eq) {
  return eq.kind == OpKind::scan ? std::get<ScanInfo>(eq.info).carry_count : std::get<IterateInfo>(eq.info).carry_count;
}

// The sub-program that gives a loop's next carry: a scan's step, an
// iterate's step (its until is programs[0]).
std::size_t step_of(const Equation& eq) { return eq.kind == OpKind::scan ? 0 : 1; }

// The loop's input that parameter `k` of its sub-program `program` is
// (ir/program.hpp lays them out); -1 for an iterate step's stop.
int input_of(const Equation& eq, std::size_t program, std::size_t k) {
  if (eq.kind == OpKind::scan || program == 0) return int(k);
  const auto& s = std::get<IterateInfo>(eq.info);
  const auto carry = std::size_t(s.carry_count);
  if (k < carry) return int(k);
  return k == carry ? -1 : int(k - 1 + std::size_t(s.until_captures));
}

// Whether the loop's input j is a scanned array (never split).
bool is_xs(const Equation& eq, std::size_t j) {
  if (eq.kind != OpKind::scan) return false;
  const auto& s = std::get<ScanInfo>(eq.info);
  return j >= std::size_t(s.carry_count) && j < std::size_t(s.carry_count + s.xs_count);
}

// What the analysis finds in one program, given which parameters are split.
struct Analysis {
  std::vector<bool> split;          // per value: computed as its parts
  std::vector<bool> read_on_parts;  // per value: some equation reads its parts
  std::vector<bool> on_parts;       // per equation: computed from its operands' parts
};

class Scalarizer {
 public:
  explicit Scalarizer(std::int64_t max_elements) : max_elements_(max_elements) {}
  // Whether values of this type are split.
  bool small(const TensorType& t) const {
    if (t.shape.empty() || t.placement != nx::Placement::host() || t.dtype == DType::complex128) return false;
    const std::int64_t n = nx::numel(t.shape);
    return n >= 1 && n <= max_elements_;
  }
  // Which values are split, given which parameters and results are.
  Analysis analyze(const Program& p, const std::vector<bool>& split_params, const std::vector<bool>& split_results);
  // Per input of a loop: whether it goes in as its parts.
  const std::vector<bool>& decide(const Equation& loop);
  // The program with the given parameters and results split: each becomes
  // its parts, in place.
  Program rewrite(const Program& p, const std::vector<bool>& split_params, const std::vector<bool>& split_results);

 private:
  Analysis forward(const Program& p, const std::vector<bool>& split_params, const std::vector<bool>& excluded);
  std::int64_t max_elements_;
  std::unordered_map<const Program*, std::vector<bool>> decisions_;  // by the loop's last sub-program
};

// Splits what can be computed on parts, then, until nothing changes, not
// what no equation (nor a split result) reads on parts: putting it back
// together would cost more than one tensor operation.
Analysis Scalarizer::analyze(const Program& p, const std::vector<bool>& split_params,
                             const std::vector<bool>& split_results) {
  std::vector<bool> excluded(p.equations.size(), false);
  for (;;) {
    Analysis a = forward(p, split_params, excluded);
    std::vector<bool> wanted = a.read_on_parts;
    for (std::size_t r = 0; r < p.results.size(); ++r)
      if (split_results[r]) wanted[std::size_t(p.results[r])] = true;
    bool changed = false;
    for (std::size_t i = 0; i < p.equations.size(); ++i) {
      const int o = p.equations[i].outputs.empty() ? -1 : p.equations[i].outputs[0];
      if (a.on_parts[i] && a.split[std::size_t(o)] && !wanted[std::size_t(o)]) excluded[i] = true, changed = true;
    }
    if (!changed) return a;
  }
}

Analysis Scalarizer::forward(const Program& p, const std::vector<bool>& split_params, const std::vector<bool>& excluded) {
  Analysis a;
  a.split.assign(p.types.size(), false);
  a.read_on_parts.assign(p.types.size(), false);
  a.on_parts.assign(p.equations.size(), false);
  for (std::size_t k = 0; k < p.params.size(); ++k) a.split[std::size_t(p.params[k])] = split_params[k];
  auto has_parts = [&](int v) { return a.split[std::size_t(v)] || p.types[std::size_t(v)].shape.empty(); };
  for (std::size_t i = 0; i < p.equations.size(); ++i) {
    const Equation& eq = p.equations[i];
    if (eq.kind == OpKind::constant) {
      a.split[std::size_t(eq.outputs[0])] = small(p.types[std::size_t(eq.outputs[0])]);
    } else if (is_supported(eq, p) && !excluded[i]) {
      const TensorType& type = p.types[std::size_t(eq.outputs[0])];
      bool operands = true, any_split = false;
      for (int v : eq.inputs) operands = operands && has_parts(v), any_split = any_split || a.split[std::size_t(v)];
      if (!operands || !(small(type) || (type.shape.empty() && any_split))) continue;
      a.on_parts[i] = true;
      a.split[std::size_t(eq.outputs[0])] = small(type);
      for (int v : eq.inputs) a.read_on_parts[std::size_t(v)] = true;
    } else if (is_loop(eq)) {
      const std::vector<bool>& in = decide(eq);
      for (std::size_t j = 0; j < in.size(); ++j)
        if (in[j]) a.read_on_parts[std::size_t(eq.inputs[j])] = true;
      for (int k = 0; k < carry_count(eq); ++k) a.split[std::size_t(eq.outputs[std::size_t(k)])] = in[std::size_t(k)];
    }
  }
  return a;
}

// Optimistically every small carry and capture, then, until nothing
// changes, not a carry whose step does not give it back split, nor a
// capture no equation reads on parts.
const std::vector<bool>& Scalarizer::decide(const Equation& loop) {
  const Program* key = loop.programs.back().get();
  if (auto d = decisions_.find(key); d != decisions_.end()) return d->second;
  const auto carries = std::size_t(carry_count(loop));
  const std::size_t step = step_of(loop);
  std::vector<bool> in(loop.inputs.size(), false);
  for (std::size_t q = 0; q < loop.programs.size(); ++q)
    for (std::size_t k = 0; k < loop.programs[q]->params.size(); ++k) {
      const int j = input_of(loop, q, k);
      if (j >= 0 && !is_xs(loop, std::size_t(j)))
        in[std::size_t(j)] = small(loop.programs[q]->types[std::size_t(loop.programs[q]->params[k])]);
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t q = 0; q < loop.programs.size(); ++q) {
      const Program& body = *loop.programs[q];
      std::vector<bool> split_params(body.params.size(), false), split_results(body.results.size(), false);
      for (std::size_t k = 0; k < body.params.size(); ++k)
        if (const int j = input_of(loop, q, k); j >= 0) split_params[k] = in[std::size_t(j)];
      if (q == step)
        for (std::size_t k = 0; k < carries; ++k) split_results[k] = in[k];
      const Analysis a = analyze(body, split_params, split_results);
      for (std::size_t k = 0; k < body.params.size(); ++k) {
        const int j = input_of(loop, q, k);
        if (j < 0 || !in[std::size_t(j)]) continue;
        const bool keep = std::size_t(j) < carries ? q != step || a.split[std::size_t(body.results[std::size_t(j)])]
                                                   : a.read_on_parts[std::size_t(body.params[k])];
        if (!keep) in[std::size_t(j)] = false, changed = true;
      }
    }
  }
  return decisions_[key] = std::move(in);
}

// One program rewritten: the values of the original keep their numbers
// (where they are still defined whole); parts are new values.
class Rewriting {
 public:
  Rewriting(Scalarizer& s, const Program& in, const std::vector<bool>& split_params,
            const std::vector<bool>& split_results)
      : s_(s), in_(in), split_results_(split_results), a_(s.analyze(in, split_params, split_results)), parts_(in.types.size()), whole_(in.types.size(), false) {
    out_.types = in.types;
    for (std::size_t k = 0; k < in.params.size(); ++k) {
      const int v = in.params[k];
      if (!split_params[k]) {
        out_.params.push_back(v);
        whole_[std::size_t(v)] = true;
        continue;
      }
      for (std::int64_t e = 0; e < numel(v); ++e) {
        parts_[std::size_t(v)].push_back(out_.add_value(element_type(type(v))));
        out_.params.push_back(parts_[std::size_t(v)].back());
      }
    }
  }

  Program run() {
    for (std::size_t i = 0; i < in_.equations.size(); ++i) {
      const Equation& eq = in_.equations[i];
      site_ = eq.site;
      if (eq.kind == OpKind::constant) constant(eq);
      else if (a_.on_parts[i]) on_parts(eq);
      else if (is_loop(eq)) loop(eq);
      else whole_equation(eq);
    }
    for (std::size_t r = 0; r < in_.results.size(); ++r) {
      const int v = in_.results[r];
      if (!split_results_[r]) {
        out_.results.push_back(whole(v));
        continue;
      }
      for (int e : parts_of(v)) out_.results.push_back(e);
    }
    return std::move(out_);
  }

 private:
  rune::detail::CallSite site_;  // of the equation being split: its parts are placed there

  const TensorType& type(int v) const { return in_.types[std::size_t(v)]; }
  std::int64_t numel(int v) const { return nx::numel(type(v).shape); }

  // (`lanes`: those of the part of a map's result it computes, Equation::lanes)
  int emit(Prim prim, const Params& params, std::vector<int> inputs, const TensorType& type, int output = -1,
           Lanes lanes = {}) {
    Equation eq;
    eq.prim = prim;
    eq.params = params;
    eq.site = site_;
    eq.lanes = lanes;
    eq.inputs = std::move(inputs);
    eq.outputs = {output >= 0 ? output : out_.add_value(type)};
    out_.equations.push_back(std::move(eq));
    return out_.equations.back().outputs[0];
  }
  int emit_constant(const nx::Tensor& t) {
    Equation eq;
    eq.kind = OpKind::constant;
    eq.constant = t;
    eq.outputs = {out_.add_value(nx::ops::type_of(t))};
    out_.equations.push_back(std::move(eq));
    return out_.equations.back().outputs[0];
  }

  // The value whole: put back together from its parts the first time, by
  // selects under one-hot masks (constants), which the VM computes as one
  // fused kernel reading the parts from scalar registers into a buffer its
  // memory plan gives (a concatenate of reshaped parts would box each).
  int whole(int v) {
    if (whole_[std::size_t(v)]) return v;
    const std::vector<int>& parts = parts_[std::size_t(v)];
    const TensorType& t = type(v);
    if (t.shape.empty()) return parts[0];
    whole_[std::size_t(v)] = true;
    auto mask = [&](std::size_t k) {  // true at element k (at every element for one part)
      nx::Tensor m = nx::ops::filled(DType::bool_, t.shape, parts.size() == 1 ? 1 : 0);
      nx::ops::data_of<bool>(m)[k] = true;
      return emit_constant(m);
    };
    const std::size_t last = parts.size() - 1;
    int acc = parts[last];
    for (std::size_t k = std::max<std::size_t>(last, 1); k-- > 0;)
      acc = emit(Prim::select, {}, {mask(k), parts[k], acc}, t, k == 0 ? v : -1);
    return v;
  }

  // The value's elements: sliced out of it the first time when it is not
  // split (a loop's input).
  const std::vector<int>& parts_of(int v) {
    std::vector<int>& parts = parts_[std::size_t(v)];
    if (!parts.empty()) return parts;
    const TensorType& t = type(v);
    if (t.shape.empty()) return parts = {whole(v)};
    const TensorType one{t.dtype, Shape(t.shape.size(), 1), t.placement};
    for (std::int64_t e = 0; e < numel(v); ++e) {
      Params slice;
      slice.starts = unravel(e, t.shape);
      slice.stops = slice.starts;
      for (auto& s : slice.stops) ++s;
      slice.steps.assign(t.shape.size(), 1);
      parts.push_back(emit(Prim::reshape, {}, {emit(Prim::slice, slice, {whole(v)}, one)}, element_type(t)));
    }
    return parts;
  }

  void copy(const Equation& eq) {
    Equation c = eq;
    for (int& v : c.inputs) v = whole(v);
    for (int v : c.outputs) whole_[std::size_t(v)] = true;
    out_.equations.push_back(std::move(c));
  }

  void constant(const Equation& eq) {
    copy(eq);
    const int v = eq.outputs[0];
    if (!a_.split[std::size_t(v)]) return;
    const nx::Tensor c = nx::ops::contiguous(eq.constant);
    const auto size = std::int64_t(nx::size_of(c.dtype()));
    for (std::int64_t e = 0; e < numel(v); ++e) {
      nx::Tensor element = nx::ops::make_tensor(c.dtype(), {});
      std::memcpy(nx::ops::data_of<char>(element), nx::ops::data_of<const char>(c) + e * size, std::size_t(size));
      parts_[std::size_t(v)].push_back(emit_constant(element));
    }
  }

  // A construct other than a loop, a primitive on whole values.
  void whole_equation(const Equation& eq) {
    Equation c = eq;
    for (auto& sub : c.programs)
      sub = std::make_shared<Program>(s_.rewrite(*sub, std::vector<bool>(sub->params.size(), false),
                                                 std::vector<bool>(sub->results.size(), false)));
    copy(c);
  }

  void on_parts(const Equation& eq) {
    const int o = eq.outputs[0];
    const TensorType& t = type(o);
    std::vector<int> result;
    if (nx::ops::info(eq.prim).family == Family::reduce) {
      result = reduced(eq);
    } else {
      for (std::int64_t e = 0; e < nx::numel(t.shape); ++e) result.push_back(element(eq, unravel(e, t.shape)));
    }
    parts_[std::size_t(o)] = std::move(result);
  }

  // Element `index` of a layout or elementwise primitive's result.
  int element(const Equation& eq, const Shape& index) {
    const TensorType& t = type(eq.outputs[0]);
    const Params& p = eq.params;
    auto of = [&](int v, const Shape& at) { return parts_of(v)[std::size_t(ravel(at, type(v).shape))]; };
    const int x = eq.inputs[0];
    const Shape& from = type(x).shape;
    switch (eq.prim) {
      case Prim::reshape: return parts_of(x)[std::size_t(ravel(index, t.shape))];
      case Prim::broadcast: return parts_of(x)[std::size_t(broadcast_source(index, from, t.shape))];
      case Prim::slice: {
        Shape at = index;
        for (std::size_t d = 0; d < at.size(); ++d) at[d] = p.starts[d] + index[d] * p.steps[d];
        return of(x, at);
      }
      case Prim::transpose: {
        Shape at(index.size(), 0);
        for (std::size_t d = 0; d < index.size(); ++d) at[std::size_t(p.axes[d])] = index[d];
        return of(x, at);
      }
      case Prim::flip: {
        Shape at = index;
        for (auto d : p.axes) at[std::size_t(d)] = from[std::size_t(d)] - 1 - index[std::size_t(d)];
        return of(x, at);
      }
      case Prim::concatenate: {
        Shape at = index;
        const auto axis = std::size_t(p.axis);
        for (int v : eq.inputs) {
          if (at[axis] < type(v).shape[axis]) return of(v, at);
          at[axis] -= type(v).shape[axis];
        }
        nx::ops::internal_assert(false, "a concatenate's length to be its operands' (its type rule sums them)");
        return -1;
      }
      default: break;  // elementwise
    }
    std::vector<int> operands;
    for (int v : eq.inputs)
      operands.push_back(parts_of(v)[std::size_t(broadcast_source(index, type(v).shape, t.shape))]);
    return emit(eq.prim, p, std::move(operands), element_type(t), -1,
                eq.lanes.part(ravel(index, t.shape), nx::numel(t.shape)));
  }

  // A reduction's result elements, each combined from its row's parts in
  // eager's order (docs/accuracy.md, "The order of reductions"): element i
  // of the row folded into accumulator i mod L (from the identity), then
  // accumulator k combined with k + L/2, k + L/4, ... Combining a result of
  // a fold with the identity gives it back (x + 0 is x once x is no -0, a
  // NaN stays the same NaN), so only the accumulators that hold elements
  // are combined.
  std::vector<int> reduced(const Equation& eq) {
    const int x = eq.inputs[0];
    const TensorType& t = type(eq.outputs[0]);
    const Shape& from = type(x).shape;
    const Params& p = eq.params;
    Shape row_shape;
    for (auto d : p.axes) row_shape.push_back(from[std::size_t(d)]);
    const std::int64_t row = nx::numel(row_shape), accumulators = t.dtype == DType::float32 ? 32 : 16;
    const Prim combine = eq.prim == Prim::reduce_sum    ? Prim::add
                         : eq.prim == Prim::reduce_prod ? Prim::mul
                         : eq.prim == Prim::reduce_max  ? Prim::maximum
                                                        : Prim::minimum;
    const int identity = emit_constant(identity_of(eq.prim, t.dtype));
    std::vector<int> result;
    for (std::int64_t r = 0; r < nx::numel(t.shape); ++r) {
      const Shape kept = unravel(r, t.shape);
      const Lanes lane = eq.lanes.part(r, nx::numel(t.shape));
      std::vector<int> acc;  // the accumulators holding elements (row <= 8 < L: one each)
      for (std::int64_t i = 0; i < row; ++i) {
        const Shape in_row = unravel(i, row_shape);
        Shape at(from.size(), 0);
        std::size_t next_kept = 0;
        for (std::size_t d = 0; d < from.size(); ++d) {
          const auto it = std::find(p.axes.begin(), p.axes.end(), std::int64_t(d));
          at[d] = it == p.axes.end() ? kept[next_kept++] : in_row[std::size_t(it - p.axes.begin())];
        }
        acc.push_back(emit(combine, {}, {identity, parts_of(x)[std::size_t(ravel(at, from))]}, element_type(t), -1,
                           lane));
      }
      for (std::int64_t w = accumulators / 2; w >= 1; w /= 2)
        for (std::int64_t k = 0; k < w && k + w < std::int64_t(acc.size()); ++k)
          acc[std::size_t(k)] =
              emit(combine, {}, {acc[std::size_t(k)], acc[std::size_t(k + w)]}, element_type(t), -1, lane);
      result.push_back(acc[0]);
    }
    return result;
  }

  static nx::Tensor identity_of(Prim reduction, DType dtype) {
    const double inf = std::numeric_limits<double>::infinity();
    const double value = reduction == Prim::reduce_sum    ? 0.0
                         : reduction == Prim::reduce_prod ? 1.0
                         : reduction == Prim::reduce_max  ? -inf
                                                          : inf;
    return nx::ops::filled(dtype, {}, value);
  }

  void loop(const Equation& eq) {
    const std::vector<bool>& in = s_.decide(eq);
    const auto carries = std::size_t(carry_count(eq));
    Equation c = eq;
    c.inputs.clear();
    for (std::size_t j = 0; j < eq.inputs.size(); ++j) {
      if (!in[j]) {
        c.inputs.push_back(whole(eq.inputs[j]));
        continue;
      }
      for (int e : parts_of(eq.inputs[j])) c.inputs.push_back(e);
    }
    for (std::size_t q = 0; q < eq.programs.size(); ++q) {
      const Program& body = *eq.programs[q];
      std::vector<bool> split_params(body.params.size(), false), split_results(body.results.size(), false);
      for (std::size_t k = 0; k < body.params.size(); ++k)
        if (const int j = input_of(eq, q, k); j >= 0) split_params[k] = in[std::size_t(j)];
      if (q == step_of(eq))
        for (std::size_t k = 0; k < carries; ++k) split_results[k] = in[k];
      c.programs[q] = std::make_shared<Program>(s_.rewrite(body, split_params, split_results));
    }
    int more_carries = 0, more_until_captures = 0;
    for (std::size_t j = 0; j < eq.inputs.size(); ++j) {
      if (!in[j]) continue;
      const int more = int(numel(eq.inputs[j])) - 1;
      if (j < carries) more_carries += more;
      else if (eq.kind == OpKind::iterate && j < carries + std::size_t(std::get<IterateInfo>(eq.info).until_captures))
        more_until_captures += more;
    }
    if (eq.kind == OpKind::scan) {
      std::get<ScanInfo>(c.info).carry_count += more_carries;
    } else {
      std::get<IterateInfo>(c.info).carry_count += more_carries;
      std::get<IterateInfo>(c.info).until_captures += more_until_captures;
    }
    c.outputs.clear();
    for (std::size_t m = 0; m < eq.outputs.size(); ++m) {
      const int v = eq.outputs[m];
      if (m >= carries || !in[m]) {
        c.outputs.push_back(v);
        whole_[std::size_t(v)] = true;
        continue;
      }
      for (std::int64_t e = 0; e < numel(v); ++e) {
        parts_[std::size_t(v)].push_back(out_.add_value(element_type(type(v))));
        c.outputs.push_back(parts_[std::size_t(v)].back());
      }
    }
    out_.equations.push_back(std::move(c));
  }

  Scalarizer& s_;
  const Program& in_;
  const std::vector<bool>& split_results_;
  Analysis a_;
  Program out_;
  std::vector<std::vector<int>> parts_;  // per value of in_: its parts in out_ (none: not split)
  std::vector<bool> whole_;              // per value of in_: defined whole in out_
};

Program Scalarizer::rewrite(const Program& p, const std::vector<bool>& split_params,
                            const std::vector<bool>& split_results) {
  return Rewriting(*this, p, split_params, split_results).run();
}

}  // namespace

Program scalarize_small_values(const Program& program, std::int64_t max_elements) {
  if (max_elements == 0) return program;
  Scalarizer s(max_elements);
  return canonical(s.rewrite(program, std::vector<bool>(program.params.size(), false),
                             std::vector<bool>(program.results.size(), false)));
}

}  // namespace rune::ir
