// The fusion planner: which equations of a program gather into one fused
// kernel. The compiler (compile.cpp) walks the equations in order and asks
// it where each goes; the planner keeps the open kernel's group and hands
// it back closed, for the compiler to lower into a FusedKernel:
// - elementwise primitives over tensors of one shape (operands of that
//   shape, of one element, or rows repeated along the leading axes) join
//   the open kernel; one of another shape, or an equation reading one of
//   its values, closes it first (the equations in between read nothing of
//   it, so they may run first);
// - a reduction of one of its values over its trailing axes folds into it
//   (sum(x * x) is one pass); but in a kernel in rows, a short row's
//   reduction, and the elementwise values of one element per row after it,
//   are steps over the block's rows (FusedKernel::Step::Over), spread along
//   the rows where a value of the kernel's shape reads them;
// - so does a scatter_add of one of its values (a segment_sum): each
//   block's rows are added into the result as they are computed (a kernel
//   has reductions or scatters, not both);
// - an equation reading a reduction's result closes the kernel, keeping
//   out of it the members that neither the reductions nor the members kept
//   need: they start the next kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <vector>

#include "ir/program.hpp"
#include "vm/code.hpp"

namespace rune::vm {

// The eager kernels' row loop for an elementwise equation of `program`
// (null: none), and whether it has one.
RowLoop row_loop(const ir::Program& program, const ir::Equation& eq);
bool has_row_loop(const ir::Program& program, const ir::Equation& eq);

// The elements of a row `eq` reduces when it reduces the trailing axes of
// its operand (all of them, or some), of the operand's dtype, with pieces
// in the kernel table; else nothing.
std::optional<std::int64_t> reduced_row(const ir::Program& program, const ir::Equation& eq);

// The elements of each row a take or scatter_add (operand, indices, ...)
// addresses: its operand's row along its axis.
std::int64_t indexed_row(const ir::Program& program, const ir::Equation& eq);

// What the planner asks the compiler about the values it has placed.
class PlacedValues {
 public:
  virtual bool scalar(int v) const = 0;        // in a scalar register
  virtual bool pending_take(int v) const = 0;  // a take whose rows a kernel may gather
  virtual std::int64_t gathered_row(int v) const = 0;  // (of a pending take) the elements of its rows

 protected:
  ~PlacedValues() = default;
};

// A fused kernel's equations (indices into the program's), as planned.
struct KernelGroup {
  nx::Shape shape;
  std::vector<std::size_t> members;
  std::unordered_set<int> values;
  std::vector<std::size_t> reductions;  // equations reducing members' values over their trailing axes
  std::vector<std::size_t> scatters;    // scatter_adds along axis 0 of members' values
  std::unordered_set<int> reduced;      // their results
  std::unordered_set<int> per_row;      // members' values of one element per row (Step::Over)
  std::int64_t row = 0;                 // the kernel's rows (FusedKernel::row), 0 while it has none
  std::int64_t reduction_row = 0;       // its reductions' rows (FusedKernel::reduced)
};

class FusionPlanner {
 public:
  // `fuse` false: every kernel is one equation (a NaN hunt names each
  // primitive).
  FusionPlanner(const ir::Program& program, const PlacedValues& placed, bool fuse)
      : p_(program), placed_(placed), fuse_(fuse) {}

  // Whether eq reads a reduction's result: the open kernel must be closed
  // first (close_for_reduced).
  bool reads_reduced(const ir::Equation& eq) const;
  // Whether eq reads one of the open kernel's values.
  bool reads_open(const ir::Equation& eq) const;
  // Equation i joins the open kernel as a step over its rows, a folded
  // reduction or a scatter; false: it does not, and nothing changed.
  bool absorbs(std::size_t i);
  // Elementwise equation i (with a row loop, of tensors) joins the open
  // kernel, or starts the next one: then the closed kernel is returned.
  std::optional<KernelGroup> add_elementwise(std::size_t i);
  // The open kernel, closed (empty members: none was open).
  KernelGroup close();
  // The part of the open kernel that the reductions need, closed; the
  // members nothing of it needs stay open as the next kernel.
  KernelGroup close_for_reduced();

 private:
  const ir::TensorType& type(int v) const { return p_.types[std::size_t(v)]; }
  bool folds(const ir::Equation& eq) const;
  bool scatters(const ir::Equation& eq) const;
  bool joins_per_row(const ir::Equation& eq) const;
  bool open_is_per_row_of(const ir::Equation& eq) const;
  bool spreads_badly(const ir::Equation& eq) const;
  std::int64_t row_with(const ir::Equation& eq) const;

  const ir::Program& p_;
  const PlacedValues& placed_;
  bool fuse_;
  KernelGroup open_;
};

}  // namespace rune::vm
