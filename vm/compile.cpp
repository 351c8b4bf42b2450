// The compiler. One walk over the equations in order:
// - every value gets a home: a scalar register when it is 0-d and its
//   elements fit 8 bytes, else a tensor register; constants are put in
//   place once (the registers' initial contents);
// - an elementwise primitive over scalar registers becomes one scalar
//   instruction;
// - equations over tensors go where the fusion planner says (fusion.hpp):
//   into the open fused kernel, or not; a kernel it closes is lowered here
//   into a FusedKernel, which writes only the values read outside it;
// - a slice or reshape that is a run of its operand's elements waits: a
//   kernel reads the operand in place, anything else has it emitted then;
// - a take waits too: a kernel of its shape gathers the rows it names
//   block by block (`take(x, b) - take(x, a)` is one pass over the
//   indices), anything else has it emitted where it reads it;
// - a construct lowers as the construct table says (ir::Lowering): its
//   sub-programs compiled and run by an instruction of its kind, or its eager
//   rule called; every other primitive calls its eager rule.
// Which buffers the kernels may write in place is the memory plan's, on the
// finished code (memory_plan.hpp).
#include "vm/compile.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/construct.hpp"
#include "ir/verify.hpp"
#include "ops/concrete.hpp"
#include "ops/nan_hunt.hpp"
#include "vm/fusion.hpp"
#include "vm/kernel_shapes.hpp"
#include "vm/memory_plan.hpp"
#include "vm/operands.hpp"
#include "vm/verify.hpp"

namespace rune::vm {
namespace {

using nx::ops::Family;
using nx::ops::Prim;
namespace kernels = nx::ops::kernels;

Family family_of(const ir::Equation& eq) { return nx::ops::info(eq.prim).family; }

bool elementwise(const ir::Equation& eq) { return eq.kind == ir::OpKind::primitive && nx::ops::is_elementwise(eq.prim); }

// A binary step of two gathered operands that nothing else in the kernel
// reads (`take(x, b) - take(x, a)`), whose primitive ops/indexing.hpp pairs
// (add, sub, mul of float32 and float64), reads them where their indices
// point (Step::Over::paired) instead of having their rows copied into block
// buffers first: the same operations on the same elements, eager's bits.
void pair_gathered_operands(FusedKernel& m) {
  std::vector<int> reads(m.slots.size(), 0);
  for (const FusedKernel::Step& s : m.steps)
    for (std::int32_t in : s.inputs()) ++reads[std::size_t(in)];
  for (const FusedKernel::Reduction& r : m.reductions) ++reads[std::size_t(r.slot)];
  for (const FusedKernel::Scattered& s : m.scatters) ++reads[std::size_t(s.slot)];
  auto indexed = [&](std::int32_t slot) -> FusedKernel::Indexed* {
    for (FusedKernel::Indexed& g : m.indexed)
      if (g.slot == slot && reads[std::size_t(slot)] == 1) return &g;
    return nullptr;
  };
  auto index_dtype = [&](const FusedKernel::Indexed& g) {
    return m.slots[std::size_t(m.slots[std::size_t(g.slot)].indices)].dtype;
  };
  for (FusedKernel::Step& step : m.steps) {
    if (step.over != FusedKernel::Step::Over::elements || step.family != Family::binary) continue;
    FusedKernel::Indexed* const a = indexed(step.in[0]);
    FusedKernel::Indexed* const b = indexed(step.in[1]);
    if (!a || !b || a == b || a->rows.row != b->rows.row || a->rows.count != b->rows.count ||
        a->rows.mode != b->rows.mode || index_dtype(*a) != index_dtype(*b))
      continue;
    const nx::ops::PairedRows loop = nx::ops::paired_rows(step.prim, m.slots[std::size_t(step.in[0])].dtype,
                                                          index_dtype(*a), a->rows.mode, std::size_t(a->rows.row));
    if (!loop) continue;
    step.over = FusedKernel::Step::Over::paired;
    step.row.paired = loop;
    a->in_place = b->in_place = true;
  }
}

// A program's code, whose parameters may give their buffers as `params` says
// (memory_plan.hpp): a call's own, a scan's step, or another construct's
// sub-code.
std::shared_ptr<const Code> compile_code(std::shared_ptr<const ir::Program> program, Parameters params,
                                         std::shared_ptr<const ir::Program> traced = nullptr);

class Compiler final : PlacedValues {
 public:
  // (while a NaN hunt is on, nothing fuses: each primitive is checked alone)
  Compiler(const ir::Program& program, Code& code)
      : p_(program), code_(code), fusion_(program, *this, !nx::ops::hunting_nans()) {}

  void run() {
    place_values();
    for (std::size_t i = 0; i < p_.equations.size(); ++i) add(i);
    emit_kernel(fusion_.close());
    for (int v : p_.results) materialize(v);
    for (int v : p_.params) code_.params.push_back(home_[std::size_t(v)]);
    for (int v : p_.results) code_.results.push_back(home_[std::size_t(v)]);
    for (std::size_t k = 0; k < code_.results.size(); ++k)
      code_.moved_out.push_back(std::find(code_.results.begin() + long(k) + 1, code_.results.end(),
                                          code_.results[k]) == code_.results.end());
  }

 private:
  const ir::TensorType& type(int v) const { return p_.types[std::size_t(v)]; }
  Location home(int v) const { return home_[std::size_t(v)]; }

  // (what the fusion planner asks)
  bool scalar(int v) const override { return home(v).scalar; }
  bool pending_take(int v) const override { return pending_takes_.count(v) > 0; }
  std::int64_t gathered_row(int v) const override { return rows_of(p_.equations[pending_takes_.at(v)]).row; }

  std::int32_t new_scalar(nx::DType dtype) {
    code_.scalars.push_back(Scalar{});
    code_.scalar_types.push_back(dtype);
    return std::int32_t(code_.scalars.size() - 1);
  }
  std::int32_t new_tensor() {
    code_.tensors.emplace_back();
    return std::int32_t(code_.tensors.size() - 1);
  }

  void place_values() {
    users_.resize(p_.types.size());
    read_outside_.assign(p_.types.size(), false);
    for (int v : p_.results) read_outside_[std::size_t(v)] = true;
    for (std::size_t v = 0; v < p_.types.size(); ++v) {
      const ir::TensorType& t = p_.types[v];
      if (t.shape.empty() && nx::size_of(t.dtype) <= sizeof(Scalar)) home_.push_back({true, new_scalar(t.dtype)});
      else home_.push_back({false, new_tensor()});
    }
    for (std::size_t i = 0; i < p_.equations.size(); ++i) {
      const ir::Equation& eq = p_.equations[i];
      for (int v : eq.inputs) users_[std::size_t(v)].push_back(i);
      if (eq.kind != ir::OpKind::constant) continue;
      const Location at = home(eq.outputs[0]);
      code_.constants.push_back(at);
      code_.constant_values.push_back(eq.constant);
      if (at.scalar) {
        std::memcpy(code_.scalars[std::size_t(at.index)].bytes, nx::ops::base_address(*eq.constant.impl()),
                    nx::size_of(eq.constant.dtype()));
        scalar_constants_[eq.outputs[0]] = {eq.constant, -1};
      } else {
        code_.tensors[std::size_t(at.index)] = eq.constant;
      }
    }
  }

  void add(std::size_t i) {
    const ir::Equation& eq = p_.equations[i];
    if (eq.kind == ir::OpKind::constant) return;
    if (fusion_.reads_reduced(eq)) emit_kernel(fusion_.close_for_reduced());
    if (fusion_.absorbs(i)) return;
    if (elementwise(eq) && scalar_operation(eq)) return emit_scalar(eq);
    if (elementwise(eq) && !home(eq.outputs[0]).scalar && has_row_loop(p_, eq)) {
      if (std::optional<KernelGroup> closed = fusion_.add_elementwise(i)) emit_kernel(std::move(*closed));
      return;
    }
    if (fusion_.reads_open(eq)) emit_kernel(fusion_.close());
    if (element_of_tensor(eq)) {  // (of a view: the element of what it views, read in place)
      const auto [of, offset] = run_of(eq.inputs[0]);
      materialize(of);
      return emit_load(eq.outputs[0], home(of).index, offset);
    }
    if (gathered_take(eq)) {
      pending_takes_[eq.outputs[0]] = i;
      return;
    }
    if (const std::optional<std::int64_t> offset = contiguous_view(eq)) {
      pending_views_[eq.outputs[0]] = {i, eq.inputs[0], *offset};
      return;
    }
    emit_equation(eq);
  }

  // ---- views
  // A slice or reshape whose elements are a run of its operand's, in C
  // order, from element `offset` (when the operand is in C order): nothing
  // is emitted for it until something reads it; a fused kernel reading it
  // addresses the operand's elements in place (Source::view), anything else
  // has it materialized, its eager rule called where it is read.
  std::optional<std::int64_t> contiguous_view(const ir::Equation& eq) const {
    if (eq.kind != ir::OpKind::primitive || home(eq.outputs[0]).scalar || home(eq.inputs[0]).scalar) return {};
    if (eq.prim == Prim::reshape) return 0;
    if (eq.prim != Prim::slice) return {};
    const nx::Shape &in = type(eq.inputs[0]).shape, &out = type(eq.outputs[0]).shape;
    std::int64_t offset = 0, in_stride = 1, out_stride = 1;
    for (std::size_t d = in.size(); d-- > 0;) {
      offset += eq.params.starts[d] * in_stride;
      if (out[d] > 1 && in_stride * eq.params.steps[d] != out_stride) return {};
      in_stride *= in[d];
      out_stride *= out[d];
    }
    return offset;
  }

  // The value v is a run of, and where that run starts: through views of
  // views to a value something computes.
  std::pair<int, std::int64_t> run_of(int v) const {
    std::int64_t offset = 0;
    for (auto view = pending_views_.find(v); view != pending_views_.end(); view = pending_views_.find(v)) {
      offset += view->second.offset;
      v = view->second.of;
    }
    return {v, offset};
  }

  // Emits a pending view's or take's equation, before the instruction
  // reading it.
  void materialize(int v) {
    if (const auto take = pending_takes_.find(v); take != pending_takes_.end()) {
      const std::size_t i = take->second;
      pending_takes_.erase(take);
      return emit_equation(p_.equations[i]);
    }
    const auto view = pending_views_.find(v);
    if (view == pending_views_.end()) return;
    const std::size_t i = view->second.equation;
    pending_views_.erase(view);
    emit_equation(p_.equations[i]);
  }

  // ---- gathers
  // A take of a tensor by a tensor of indices: nothing is emitted for it
  // until something reads it; a fused kernel of its shape gathers the rows it
  // names per block (Source::indexed), anything else has it emitted where
  // it is read.
  bool gathered_take(const ir::Equation& eq) const {
    return eq.kind == ir::OpKind::primitive && eq.prim == Prim::take && !home(eq.outputs[0]).scalar &&
           !home(eq.inputs[0]).scalar && !home(eq.inputs[1]).scalar;
  }

  // How the take or scatter_add `eq` (operand, indices, ...) addresses its
  // rows (FusedKernel::Rows).
  FusedKernel::Rows rows_of(const ir::Equation& eq) const {
    return {.axis = eq.params.axis, .row = indexed_row(p_, eq), .length = type(eq.inputs[0]).shape[std::size_t(eq.params.axis)],
            .count = nx::numel(type(eq.inputs[1]).shape), .mode = eq.params.mode};
  }

  // Whether a kernel of `shape` in rows of `row` (0: none) whose
  // reductions reduce rows of `reduced` (0: none) gathers the pending take
  // v in its blocks: of the kernel's shape, the take's rows whole in every
  // block (blocks of whole kernel rows of a multiple of them, or of 1,024
  // elements and reduced rows a multiple of them: fused_kernel.cpp's blocks
  // start at multiples of those, and its chunks of 2^15 elements).
  bool gathers(int v, const nx::Shape& shape, std::int64_t row, std::int64_t reduced) const {
    const std::int64_t rows_of = gathered_row(v);
    if (type(v).shape != shape || rows_of == 0 || (reduced != 0 && reduced % rows_of != 0)) return false;
    if (row != 0) return row <= FusedKernel::block && row % rows_of == 0;
    return FusedKernel::block % rows_of == 0;
  }

  // ---- scalar instructions
  // A reshape of a one-element tensor to 0-d (as nx::get leaves it, and the
  // scalarizing pass, ir/passes/scalarize.hpp): its element, read into a
  // scalar register.
  bool element_of_tensor(const ir::Equation& eq) const {
    return eq.kind == ir::OpKind::primitive && eq.prim == Prim::reshape && home(eq.outputs[0]).scalar &&
           !home(eq.inputs[0]).scalar;
  }

  void emit_load(int v, std::int32_t tensor, std::int64_t element = 0) {
    Instruction load;
    load.op = Op::load;
    load.dtype = type(v).dtype;
    load.dst = home(v).index;
    load.a = tensor;
    load.b = std::int32_t(element);  // (< 2^31: a run of a tensor register's elements)
    code_.instructions.push_back(load);
  }

  bool scalar_operation(const ir::Equation& eq) const {
    if (!home(eq.outputs[0]).scalar) return false;
    for (int v : eq.inputs)
      if (!home(v).scalar) return false;
    return eq.prim == Prim::stop_gradient || has_row_loop(p_, eq);
  }

  void emit_scalar(const ir::Equation& eq) {
    const Family f = family_of(eq);
    const nx::DType from = type(eq.inputs[f == Family::select ? 1 : 0]).dtype;
    // The identity (detach, a conversion to the same type): the result is its operand.
    if (eq.prim == Prim::stop_gradient || (f == Family::convert && eq.params.dtype == from)) {
      home_[std::size_t(eq.outputs[0])] = home(eq.inputs[0]);
      return;
    }
    Instruction in;
    in.prim = eq.prim;
    in.dtype = from;
    in.dst = home(eq.outputs[0]).index;
    in.a = home(eq.inputs[0]).index;
    if (eq.inputs.size() > 1) in.b = home(eq.inputs[1]).index;
    if (eq.inputs.size() > 2) in.c = home(eq.inputs[2]).index;
    in.row = row_loop(p_, eq);
    in.op = scalar_op(f, eq.prim, from);
    code_.instructions.push_back(in);
    note(eq.hoisted, {eq.site, eq.lanes});
  }

  // ---- fused kernels
  // A kernel the planner closed, lowered into a FusedKernel: its slots (where
  // each operand comes from), steps, reductions and scatters.
  void emit_kernel(KernelGroup group) {
    const std::vector<std::size_t>&members = group.members, &reductions = group.reductions, &scatters = group.scatters;
    const std::unordered_set<int>& per_row = group.per_row;
    const std::int64_t group_row = group.row, group_reduced = group.reduction_row;
    if (members.empty()) return;
    if (members.size() == 1 && reductions.empty() && scatters.empty())
      return emit_equation(p_.equations[members[0]]);  // eager's own loop is as good
    std::unordered_set<std::size_t> in_group(members.begin(), members.end());
    in_group.insert(reductions.begin(), reductions.end());
    in_group.insert(scatters.begin(), scatters.end());
    FusedKernel m;
    m.shape = group.shape;
    m.size = nx::numel(m.shape);
    std::unordered_map<int, std::int32_t> slot_of;
    auto whole = [&](int v) {  // (a tensor the kernel's gathers and scatters read in place)
      m.slots.push_back({.source = FusedKernel::Source::whole, .reg = tensor_register(v), .dtype = type(v).dtype});
      return std::int32_t(m.slots.size() - 1);
    };
    auto slot = [&](int v) {
      auto found = slot_of.find(v);
      if (found != slot_of.end()) return found->second;
      FusedKernel::Slot s;
      s.dtype = type(v).dtype;
      if (pending_views_.count(v) && type(v).shape != m.shape) materialize(v);  // (a view read broadcast)
      if (pending_takes_.count(v) && !gathers(v, m.shape, group_row, group_reduced)) materialize(v);
      if (pending_takes_.count(v)) {
        const ir::Equation& take = p_.equations[pending_takes_.at(v)];
        const int operand = take.inputs[0], indices = take.inputs[1];
        const FusedKernel::Rows rows = rows_of(take);
        s.indices = whole(indices);
        s.reg = tensor_register(operand);
        s.source = FusedKernel::Source::indexed;
        m.indexed.push_back({std::int32_t(m.slots.size()), rows,
                             nx::ops::gather_rows(type(indices).dtype, rows.mode,
                                                  std::size_t(rows.row) * nx::size_of(s.dtype))});
      } else if (pending_views_.count(v)) {
        const auto [of, offset] = run_of(v);
        materialize(of);  // (a view of a take gathered elsewhere)
        s.reg = home(of).index;
        s.source = FusedKernel::Source::view;
        s.offset = offset;
      } else {
        s.reg = home(v).index;
        const nx::Shape& shape = type(v).shape;
        const std::int64_t repeat = home(v).scalar ? 0 : repeat_of_operand(shape, m.shape);
        s.source = home(v).scalar                     ? FusedKernel::Source::scalar
                   : shape == m.shape                 ? FusedKernel::Source::tensor
                   : nx::numel(shape) == 1            ? FusedKernel::Source::element
                   : repeat == 0 || repeat != group_row ? FusedKernel::Source::broadcast
                   : row_of_operand(shape, m.shape)   ? FusedKernel::Source::rows
                                                      : FusedKernel::Source::columns;
        if (s.source == FusedKernel::Source::broadcast)
          m.gathered.push_back({std::int32_t(m.slots.size()), broadcast_strides(shape, m.shape)});
      }
      m.slots.push_back(s);
      return slot_of[v] = std::int32_t(m.slots.size() - 1);
    };
    auto shape_index = [&](int v) {  // (a per-row value's shape, in m.shapes)
      const auto at = std::find(m.shapes.begin(), m.shapes.end(), type(v).shape);
      if (at != m.shapes.end()) return std::int32_t(at - m.shapes.begin());
      m.shapes.push_back(type(v).shape);
      return std::int32_t(m.shapes.size() - 1);
    };
    std::unordered_map<int, std::int32_t> per_row_slot_of, spread_of;
    auto per_row_slot = [&](int v) {  // (v read by a step over the rows: one element per row)
      if (per_row.count(v) || home(v).scalar || nx::numel(type(v).shape) == 1) return slot(v);
      if (const auto found = per_row_slot_of.find(v); found != per_row_slot_of.end()) return found->second;
      FusedKernel::Slot s{.source = FusedKernel::Source::tensor, .reg = home(v).index, .dtype = type(v).dtype};
      if (pending_views_.count(v)) {
        const auto [of, offset] = run_of(v);
        materialize(of);
        s.reg = home(of).index;
        s.source = FusedKernel::Source::view;
        s.offset = offset;
      }
      s.shape = shape_index(v);
      m.slots.push_back(s);
      return per_row_slot_of[v] = std::int32_t(m.slots.size() - 1);
    };
    auto spread = [&](int v) {  // (a per-row value read by a step over the elements)
      if (const auto found = spread_of.find(v); found != spread_of.end()) return found->second;
      FusedKernel::Step step;
      step.over = FusedKernel::Step::Over::spread;
      step.family = Family::unary;
      step.prim = Prim::broadcast;
      step.in[0] = slot_of.at(v);
      m.slots.push_back({.source = FusedKernel::Source::computed, .dtype = type(v).dtype});
      step.out = spread_of[v] = std::int32_t(m.slots.size() - 1);
      m.steps.push_back(step);
      return step.out;
    };
    for (std::size_t i : members) {
      const ir::Equation& eq = p_.equations[i];
      const int v = eq.outputs[0];
      const bool over_rows = per_row.count(v) > 0;
      FusedKernel::Step step;
      step.family = eq.prim == Prim::stop_gradient || eq.prim == Prim::reshape ? Family::convert : family_of(eq);
      step.prim = eq.prim;
      if (step.family == Family::reduce) {
        step.over = FusedKernel::Step::Over::reduce;
        step.row.reduce = kernels::table().short_rows[int(eq.prim)][int(type(v).dtype)];
      } else {
        step.over = over_rows ? FusedKernel::Step::Over::rows : FusedKernel::Step::Over::elements;
        step.row = row_loop(p_, eq);
      }
      for (std::size_t k = 0; k < eq.inputs.size(); ++k) {
        const int in = eq.inputs[k];
        step.in[k] = step.over == FusedKernel::Step::Over::rows ? per_row_slot(in)
                     : per_row.count(in)                       ? spread(in)
                                                               : slot(in);  // (a reduction's: the rows reduced)
      }
      bool read_outside = read_outside_[std::size_t(v)];
      for (std::size_t user : users_[std::size_t(v)]) read_outside = read_outside || !in_group.count(user);
      if (step.family == Family::convert && step.prim != Prim::convert && !read_outside &&
          (per_row.count(v) > 0) == (per_row.count(eq.inputs[0]) > 0)) {
        slot_of[v] = step.in[0];  // (a reshape or stop_gradient read only here: its operand's elements, no step)
        continue;
      }
      m.slots.push_back({FusedKernel::Source::computed, read_outside ? home(v).index : -1, type(v).dtype});
      if (over_rows) m.slots.back().shape = shape_index(v);
      step.out = slot_of[v] = std::int32_t(m.slots.size() - 1);
      m.steps.push_back(step);
    }
    for (std::size_t i : reductions) {
      const ir::Equation& eq = p_.equations[i];
      const int v = eq.inputs[0];
      const kernels::Table& K = kernels::table();
      const int d = int(type(v).dtype);
      const bool short_rows = group_reduced > 1 && group_reduced <= K.short_row_elements[d];
      m.reductions.push_back({eq.prim, slot_of.at(v), home(eq.outputs[0]), type(eq.outputs[0]).shape,
                              K.reduce_pieces[int(eq.prim)][d], short_rows ? K.short_rows[int(eq.prim)][d] : nullptr});
    }
    for (std::size_t i : scatters) {
      const ir::Equation& eq = p_.equations[i];
      const ir::TensorType& operand = type(eq.inputs[0]);
      FusedKernel::Scattered s;
      s.slot = slot_of.at(eq.inputs[2]);
      s.indices = whole(eq.inputs[1]);
      s.operand = whole(eq.inputs[0]);
      s.out = home(eq.outputs[0]).index;
      s.shape = operand.shape;
      s.rows = rows_of(eq);
      s.scatter = nx::ops::scatter_rows(type(eq.inputs[1]).dtype, s.rows.mode, operand.dtype, std::size_t(s.rows.row));
      s.add = kernels::table().binary[int(Prim::add)][int(operand.dtype)];
      m.scatters.push_back(s);
    }
    pair_gathered_operands(m);
    m.row = group_row;
    m.reduced = group_reduced;
    code_.kernels.push_back(std::move(m));
    emit_indexed(Op::fused, code_.kernels.size());
    const auto placed =  // (the first equation with a site)
        std::find_if(members.begin(), members.end(), [&](std::size_t i) { return bool(p_.equations[i].site); });
    note(std::any_of(members.begin(), members.end(), [&](std::size_t i) { return p_.equations[i].hoisted; }),
         {placed == members.end() ? rune::detail::CallSite{} : p_.equations[*placed].site, {}});
  }

  // An instruction of side-table entry `size - 1` (the one just added).
  void emit_indexed(Op op, std::size_t size) {
    Instruction in;
    in.op = op;
    in.aux = std::int32_t(size - 1);
    code_.instructions.push_back(in);
  }

  // ---- everything else: eager rules on tensor registers, scans
  // The register holding v as a tensor: a scalar register is boxed by an
  // instruction, a scalar constant once, here.
  std::int32_t tensor_register(int v) {
    materialize(v);
    if (!home(v).scalar) return home(v).index;
    if (auto constant = scalar_constants_.find(v); constant != scalar_constants_.end()) {
      if (constant->second.boxed < 0) {
        constant->second.boxed = new_tensor();
        code_.tensors[std::size_t(constant->second.boxed)] = constant->second.value;
        code_.constants.push_back({false, constant->second.boxed});
      }
      return constant->second.boxed;
    }
    Instruction in;
    in.op = Op::box;
    in.dtype = type(v).dtype;
    in.dst = new_tensor();
    in.a = home(v).index;
    code_.instructions.push_back(in);
    return in.dst;
  }

  void emit_equation(const ir::Equation& eq) {
    switch (ir::lowering(eq)) {
      case ir::Lowering::eager: break;
      case ir::Lowering::scan: return emit_scan(eq);
      case ir::Lowering::body: return emit_invoke(eq, Op::body);
      case ir::Lowering::cond: return emit_invoke(eq, Op::cond);
      case ir::Lowering::iterate: return emit_invoke(eq, Op::iterate);
    }
    Call call;
    call.equation = &eq;
    for (int v : eq.inputs) call.inputs.push_back(tensor_register(v));
    // A scalar output comes through a tensor register, then a load.
    for (int v : eq.outputs) call.outputs.push_back(home(v).scalar ? new_tensor() : home(v).index);
    if (eq.kind == ir::OpKind::primitive) call.type = type(eq.outputs[0]);
    code_.calls.push_back(call);
    Instruction in;
    in.op = eq.kind == ir::OpKind::primitive ? Op::call : eq.kind == ir::OpKind::check ? Op::check : Op::construct;
    if (eq.kind == ir::OpKind::primitive) in.prim = eq.prim;
    in.aux = std::int32_t(code_.calls.size() - 1);
    code_.instructions.push_back(in);
    note(eq.hoisted, {eq.site, eq.lanes});
    for (std::size_t k = 0; k < eq.outputs.size(); ++k)
      if (home(eq.outputs[k]).scalar) emit_load(eq.outputs[k], call.outputs[k]);
  }

  void emit_scan(const ir::Equation& eq) {
    ScanOp scan;
    scan.info = std::get<ir::ScanInfo>(eq.info);
    scan.step = compile_code(eq.programs[0], {.free = std::size_t(scan.info.carry_count), .carries = true});
    for (int v : eq.inputs) {
      materialize(v);
      scan.inputs.push_back(home(v));
    }
    for (int v : eq.outputs) {
      scan.outputs.push_back(home(v));
      scan.output_types.push_back(type(v));
    }
    const ir::Program& step = *eq.programs[0];
    for (int k = 0; k < scan.info.xs_count; ++k) {
      const int row = step.params[std::size_t(scan.info.carry_count + k)];
      bool read = std::find(step.results.begin(), step.results.end(), row) != step.results.end();
      for (const ir::Equation& inner : step.equations)
        read = read || std::find(inner.inputs.begin(), inner.inputs.end(), row) != inner.inputs.end();
      scan.rows_read.push_back(read);
    }
    code_.scans.push_back(std::move(scan));
    emit_indexed(Op::scan, code_.scans.size());
    note(false, {eq.site, {}});
    hoisted_for_this_loop();
  }

  void emit_invoke(const ir::Equation& eq, Op op) {
    Invoke invoke;
    invoke.equation = &eq;
    for (std::size_t k = 0; k < eq.programs.size(); ++k) {
      Parameters params;  // (an iterate's step takes its carry from until's frame: moved, its own alone)
      if (op == Op::iterate && k == 1)
        params = {.free = std::size_t(std::get<ir::IterateInfo>(eq.info).carry_count), .carries = true};
      invoke.codes.push_back(compile_code(eq.programs[k], params));
    }
    for (int v : eq.inputs) {
      materialize(v);
      invoke.inputs.push_back(home(v));
    }
    for (int v : eq.outputs) invoke.outputs.push_back(home(v));
    code_.invokes.push_back(std::move(invoke));
    emit_indexed(op, code_.invokes.size());
    note(false, {eq.site, {}});
    if (op == Op::iterate) hoisted_for_this_loop();
  }

  // ---- the notes of the instruction just emitted: whether it computes what
  // the hoisting pass moved out of a loop (which runs before the loop,
  // ir/passes/hoist.hpp, so the instructions noted since the last loop are
  // the next loop's), and where its equation was traced (Code::origins).
  void note(bool hoisted, const Code::Origin& origin) {
    if (hoisted) hoisted_pending_.push_back(code_.instructions.size() - 1);
    if (!origin.site && !origin.lanes) return;
    code_.origins.resize(code_.instructions.size());
    code_.origins.back() = origin;
  }
  void hoisted_for_this_loop() {
    for (std::size_t pc : hoisted_pending_) code_.hoisted.push_back({pc, code_.instructions.size() - 1});
    hoisted_pending_.clear();
  }

  const ir::Program& p_;
  Code& code_;
  std::vector<std::size_t> hoisted_pending_;
  std::vector<Location> home_;
  std::vector<std::vector<std::size_t>> users_;  // the equations reading each value
  std::vector<bool> read_outside_;               // results: read by the caller
  struct ScalarConstant {
    nx::Tensor value;
    std::int32_t boxed;  // the tensor register holding it, -1 until one is needed
  };
  std::unordered_map<int, ScalarConstant> scalar_constants_;
  struct View {
    std::size_t equation;  // the slice or reshape
    int of;                // its operand
    std::int64_t offset;   // where its run starts in the operand's elements
  };
  std::unordered_map<int, View> pending_views_;  // views not emitted yet, by value
  std::unordered_map<int, std::size_t> pending_takes_;  // takes not emitted yet: their equations, by value
  FusionPlanner fusion_;
};

// Whether running code may reach a check (nx::check): its own, a
// sub-code's, or one in a construct run by its eager rule (a callback's
// function may check too).
bool may_check(const Code& code) {
  for (const Instruction& in : code.instructions)
    if (in.op == Op::check || in.op == Op::construct) return true;
  for (const ScanOp& scan : code.scans)
    if (scan.step->may_check) return true;
  for (const Invoke& invoke : code.invokes)
    for (const std::shared_ptr<const Code>& sub : invoke.codes)
      if (sub->may_check) return true;
  return false;
}

std::shared_ptr<const Code> compile_code(std::shared_ptr<const ir::Program> program, Parameters params,
                                         std::shared_ptr<const ir::Program> traced) {
  auto code = std::make_shared<Code>();
  code->program = std::move(program);
  code->traced = std::move(traced);
  Compiler(*code->program, *code).run();
  plan_memory(*code, params);
  code->may_check = may_check(*code);
  if (ir::verifying()) verify(*code);
  return code;
}

}  // namespace

std::shared_ptr<const Code> compile(std::shared_ptr<const ir::Program> program,
                                    std::shared_ptr<const ir::Program> traced) {
  const Parameters all{.free = program->params.size()};  // (read before the program is moved)
  return compile_code(std::move(program), all, std::move(traced));
}

}  // namespace rune::vm
