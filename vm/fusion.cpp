#include "vm/fusion.hpp"

#include <algorithm>
#include <unordered_map>

#include "ops/concrete.hpp"
#include "vm/kernel_shapes.hpp"

namespace rune::vm {

using nx::ops::Family;
using nx::ops::Prim;
namespace kernels = nx::ops::kernels;

namespace {
Family family_of(const ir::Equation& eq) { return nx::ops::info(eq.prim).family; }
bool elementwise(const ir::Equation& eq) { return eq.kind == ir::OpKind::primitive && nx::ops::is_elementwise(eq.prim); }
}  // namespace

RowLoop row_loop(const ir::Program& program, const ir::Equation& eq) {
  const kernels::Table& K = kernels::table();
  const int d = int(program.types[std::size_t(eq.inputs[family_of(eq) == Family::select ? 1 : 0])].dtype);
  RowLoop row{};
  if (eq.prim == Prim::reshape) {  // (of a per-row value, to another shape of its elements: a copy)
    row.unary = K.convert[d][d];
    return row;
  }
  switch (family_of(eq)) {
    case Family::unary:
      if (eq.prim == Prim::stop_gradient) row.unary = K.convert[d][d];  // a copy
      else row.unary = K.unary[int(eq.prim)][d];
      break;
    case Family::binary: row.binary = K.binary[int(eq.prim)][d]; break;
    case Family::select: row.select = K.select[d]; break;
    default: row.unary = K.convert[d][int(eq.params.dtype)]; break;
  }
  return row;
}

bool has_row_loop(const ir::Program& program, const ir::Equation& eq) {
  const RowLoop row = row_loop(program, eq);
  switch (family_of(eq)) {
    case Family::binary: return row.binary != nullptr;
    case Family::select: return row.select != nullptr;
    default: return row.unary != nullptr;
  }
}

std::optional<std::int64_t> reduced_row(const ir::Program& program, const ir::Equation& eq) {
  if (eq.kind != ir::OpKind::primitive || family_of(eq) != Family::reduce || eq.params.axes.empty()) return {};
  const ir::TensorType &in = program.types[std::size_t(eq.inputs[0])], &out = program.types[std::size_t(eq.outputs[0])];
  if (out.dtype != in.dtype || !kernels::table().reduce_pieces[int(eq.prim)][int(in.dtype)].add) return {};
  std::vector<std::int64_t> axes(eq.params.axes.begin(), eq.params.axes.end());
  std::sort(axes.begin(), axes.end());
  const std::int64_t kept = std::int64_t(in.shape.size()) - std::int64_t(axes.size());
  std::int64_t row = 1;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] != kept + std::int64_t(k)) return {};
    row *= in.shape[std::size_t(axes[k])];
  }
  return row;
}

std::int64_t indexed_row(const ir::Program& program, const ir::Equation& eq) {
  const nx::Shape& operand = program.types[std::size_t(eq.inputs[0])].shape;
  return nx::numel(nx::Shape(operand.begin() + long(eq.params.axis) + 1, operand.end()));
}

bool FusionPlanner::reads_reduced(const ir::Equation& eq) const {
  return std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](int v) { return open_.reduced.count(v) > 0; });
}

bool FusionPlanner::reads_open(const ir::Equation& eq) const {
  return std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](int v) { return open_.values.count(v) > 0; });
}

bool FusionPlanner::absorbs(std::size_t i) {
  if (!fuse_) return false;
  const ir::Equation& eq = p_.equations[i];
  if (joins_per_row(eq)) {
    if (open_.row == 0) open_.row = *reduced_row(p_, eq);  // (a reduction of the rows it starts)
    open_.members.push_back(i);
    open_.values.insert(eq.outputs[0]);
    open_.per_row.insert(eq.outputs[0]);
    return true;
  }
  if (folds(eq)) {
    open_.reduction_row = *reduced_row(p_, eq);
    open_.reductions.push_back(i);
    open_.reduced.insert(eq.outputs[0]);
    return true;
  }
  if (scatters(eq)) {
    const std::int64_t row = indexed_row(p_, eq);
    if (open_.row == 0 && row > 1) open_.row = row;  // (blocks of whole rows)
    open_.scatters.push_back(i);
    open_.reduced.insert(eq.outputs[0]);
    return true;
  }
  return false;
}

std::optional<KernelGroup> FusionPlanner::add_elementwise(std::size_t i) {
  const ir::Equation& eq = p_.equations[i];
  const nx::Shape& shape = type(eq.outputs[0]).shape;
  if (fuse_ && open_is_per_row_of(eq)) {  // (its values are one element per row of eq's shape)
    for (int v : open_.values) open_.per_row.insert(v);
    open_.row = column_of_operand(open_.shape, shape);
    open_.shape = shape;
  }
  std::optional<KernelGroup> closed;
  if (!open_.members.empty() && (!fuse_ || open_.shape != shape || spreads_badly(eq))) closed = close();
  if (open_.members.empty()) open_.shape = shape;
  open_.row = row_with(eq);
  open_.members.push_back(i);
  open_.values.insert(eq.outputs[0]);
  return closed;
}

KernelGroup FusionPlanner::close() {
  KernelGroup closed = std::move(open_);
  open_ = KernelGroup{};
  return closed;
}

KernelGroup FusionPlanner::close_for_reduced() {
  std::unordered_map<int, std::size_t> producer;
  for (std::size_t i : open_.members) producer[p_.equations[i].outputs[0]] = i;
  std::unordered_set<int> kept;
  auto keep = [&](int v) {  // v and the members' values it is computed from
    for (std::vector<int> todo{v}; !todo.empty();) {
      const int w = todo.back();
      todo.pop_back();
      if (producer.count(w) && kept.insert(w).second)
        for (int u : p_.equations[producer[w]].inputs) todo.push_back(u);
    }
  };
  for (std::size_t i : open_.reductions) keep(p_.equations[i].inputs[0]);
  for (std::size_t i : open_.scatters) keep(p_.equations[i].inputs[2]);
  for (bool more = true; more;) {  // a member reading a kept value is kept, and what it reads
    more = false;
    for (std::size_t i : open_.members) {
      const ir::Equation& eq = p_.equations[i];
      if (kept.count(eq.outputs[0])) continue;
      if (std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](int v) { return kept.count(v) > 0; })) {
        keep(eq.outputs[0]);
        more = true;
      }
    }
  }
  KernelGroup next;  // (the members left out: the next kernel, of the same shape)
  next.shape = open_.shape;
  std::vector<std::size_t> members;
  for (std::size_t i : open_.members) {
    const int v = p_.equations[i].outputs[0];
    if (kept.count(v)) {
      members.push_back(i);
      continue;
    }
    next.members.push_back(i);
    next.values.insert(v);
    open_.values.erase(v);
    if (open_.per_row.count(v)) next.per_row.insert(v);
  }
  open_.members = std::move(members);
  if (!next.per_row.empty()) next.row = open_.row;  // (the rows its per-row values are of)
  for (std::size_t i : next.members)
    for (int v : p_.equations[i].inputs)
      if (!next.values.count(v) && !placed_.scalar(v) && next.row == 0) next.row = repeat_of_operand(type(v).shape, next.shape);
  KernelGroup closed = std::move(open_);
  open_ = std::move(next);
  return closed;
}

// A reduction of a value the open kernel computes, over its trailing axes,
// in rows of the length of the kernel's other reductions, made of whole
// rows of the kernel.
bool FusionPlanner::folds(const ir::Equation& eq) const {
  if (open_.reductions.size() == FusedKernel::max_reductions || eq.inputs.empty() ||
      !open_.values.count(eq.inputs[0]) || open_.per_row.count(eq.inputs[0]))
    return false;
  const std::optional<std::int64_t> row = reduced_row(p_, eq);
  return row && open_.scatters.empty() && (open_.reductions.empty() || *row == open_.reduction_row) &&
         (open_.row == 0 || *row % open_.row == 0);
}

// A scatter_add of a value the open kernel computes, of the kernel's shape,
// into an operand and by indices computed before it, in rows that every
// block holds whole, in a kernel without reductions.
bool FusionPlanner::scatters(const ir::Equation& eq) const {
  if (eq.kind != ir::OpKind::primitive || eq.prim != Prim::scatter_add) return false;
  const int operand = eq.inputs[0], indices = eq.inputs[1], updates = eq.inputs[2];
  if (!open_.values.count(updates) || open_.values.count(operand) || open_.values.count(indices) ||
      placed_.scalar(indices) || type(updates).shape != open_.shape || !open_.reductions.empty() ||
      open_.scatters.size() == FusedKernel::max_scatters)
    return false;
  const std::int64_t row = indexed_row(p_, eq);
  if (row == 0 || row > FusedKernel::block) return false;
  return open_.row == 0 || (open_.row <= FusedKernel::block && open_.row % row == 0);
}

// Whether eq joins the open kernel as a step over its blocks' rows: a
// reduction of a member's rows to one element each (short rows, as eager
// reduces several: the same loop), a reshape of such a value, or an
// elementwise primitive of that many elements whose operands are such
// values, scalars, one element, or tensors of its elements. (`len =
// sqrt(sum(d * d, {1}))` and `k * (len - rest)` of [n, 2] springs, in the
// kernel computing d.)
bool FusionPlanner::joins_per_row(const ir::Equation& eq) const {
  if (eq.kind != ir::OpKind::primitive || open_.members.empty() || placed_.scalar(eq.outputs[0])) return false;
  const int out = eq.outputs[0];
  if (family_of(eq) == Family::reduce) {
    const int in = eq.inputs[0];
    const std::optional<std::int64_t> row = reduced_row(p_, eq);
    const int d = int(type(in).dtype);
    const kernels::Table& K = kernels::table();
    return open_.values.count(in) && !open_.per_row.count(in) && type(in).shape == open_.shape && row && *row > 1 &&
           *row <= K.short_row_elements[d] && K.short_rows[int(eq.prim)][d] && nx::numel(type(out).shape) > 1 &&
           (open_.row == *row || (open_.row == 0 && open_.scatters.empty() &&
                                  (open_.reductions.empty() || open_.reduction_row % *row == 0)));
  }
  if (open_.row <= 1 || open_.row > FusedKernel::block || nx::numel(type(out).shape) * open_.row != nx::numel(open_.shape))
    return false;
  if (eq.prim == Prim::reshape) return open_.per_row.count(eq.inputs[0]) > 0;
  if (!elementwise(eq) || !has_row_loop(p_, eq)) return false;
  return std::all_of(eq.inputs.begin(), eq.inputs.end(), [&](int v) {
    if (placed_.scalar(v) || open_.per_row.count(v)) return true;
    if (open_.values.count(v) || open_.reduced.count(v) || placed_.pending_take(v)) return false;
    const std::int64_t n = nx::numel(type(v).shape);
    return n == 1 || n == nx::numel(type(out).shape);
  });
}

// Whether the open kernel, elementwise over values of one element per row
// of elementwise eq's shape (its operands such values too, scalars or one
// element), may run as steps over the rows of eq's kernel: `where(y < 0, -k
// * y, 0) * ey` of a column y of [n, 2] positions.
bool FusionPlanner::open_is_per_row_of(const ir::Equation& eq) const {
  const nx::Shape& shape = type(eq.outputs[0]).shape;
  const std::int64_t row = column_of_operand(open_.shape, shape);
  if (open_.members.empty() || open_.row != 0 || !open_.reductions.empty() || !open_.scatters.empty() || row <= 1 ||
      row > FusedKernel::block)
    return false;
  const std::int64_t n = nx::numel(open_.shape);
  return std::all_of(open_.members.begin(), open_.members.end(), [&](std::size_t i) {
    const ir::Equation& member = p_.equations[i];
    return std::all_of(member.inputs.begin(), member.inputs.end(), [&](int v) {
      if (placed_.scalar(v) || open_.values.count(v)) return true;
      return !placed_.pending_take(v) && (nx::numel(type(v).shape) == 1 || nx::numel(type(v).shape) == n);
    });
  });
}

// Whether elementwise eq of the kernel's shape reads a per-row value that
// does not repeat along the kernel's rows (a per-row value is spread along
// them: Step::Over::spread).
bool FusionPlanner::spreads_badly(const ir::Equation& eq) const {
  return std::any_of(eq.inputs.begin(), eq.inputs.end(), [&](int v) {
    return open_.per_row.count(v) && column_of_operand(type(v).shape, open_.shape) != open_.row;
  });
}

// The kernel's rows once eq joins it (0: none): those of its first row or
// column operand (of which its reductions' rows are made). Operands
// repeating rows of another length are gathered per block, as those
// broadcast along other axes.
std::int64_t FusionPlanner::row_with(const ir::Equation& eq) const {
  std::int64_t row = open_.members.empty() ? 0 : open_.row;
  for (int v : eq.inputs) {
    if (row != 0) break;
    if (open_.values.count(v) || placed_.scalar(v)) continue;
    const bool take = placed_.pending_take(v);
    if (take && (placed_.gathered_row(v) <= 1 || placed_.gathered_row(v) > FusedKernel::block)) continue;
    const std::int64_t n = take ? placed_.gathered_row(v) : repeat_of_operand(type(v).shape, type(eq.outputs[0]).shape);
    if (n != 0 && (open_.reductions.empty() || open_.reduction_row % n == 0)) row = n;
  }
  return row;
}

}  // namespace rune::vm
