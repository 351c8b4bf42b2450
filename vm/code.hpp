// Bytecode: what the compiler (compile.hpp) makes of a program and the
// machine (machine.hpp) runs. The format is drawn in vm/README.md and
// docs/vm.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "ir/program.hpp"
#include "ops/indexing.hpp"
#include "ops/kernels/kernels.hpp"
#include "vm/native/native.hpp"

namespace rune::vm {

// The values a run returns: a few of them without allocating.
using Values = boost::container::small_vector<nx::Tensor, 4>;

enum class Op : std::uint8_t {
#define OP(name, operands, table, tier, meaning) name,
#include "vm/opcodes.def"
#undef OP
};

// A scalar register: one element of at most 8 bytes (a 0-d value).
union Scalar {
  double f64;
  float f32;
  std::int64_t i64;
  unsigned char bytes[8];
};

// Where a value lives: a scalar register or a tensor register.
struct Location {
  bool scalar = false;
  std::int32_t index = 0;
  bool operator==(const Location&) const = default;
};

// The row loop a scalar instruction runs on one element (the eager
// kernel's, so the bits are eager's).
union RowLoop {
  nx::ops::kernels::UnaryRow unary;
  nx::ops::kernels::BinaryRow binary;
  nx::ops::kernels::SelectRow select;
  nx::ops::kernels::ShortRows reduce;  // (a step reducing the block's rows: FusedKernel::Step::Over::reduce)
  nx::ops::PairedRows paired;          // (a step of two gathered operands: FusedKernel::Step::Over::paired)
};

struct Instruction {
  Op op{};
  nx::DType dtype = nx::DType::float64;  // the operands' element type
  nx::ops::Prim prim{};
  std::int32_t dst = 0, a = 0, b = 0, c = 0;  // registers (see opcodes.def)
  std::int32_t aux = 0;                       // index into calls, kernels or scans
  RowLoop row{};                              // unary, binary, select, convert
};
static_assert(sizeof(Instruction) == 32, "docs/vm.md draws the instruction in 32 bytes");

// An equation bound on tensor registers (call: a primitive, by its eager
// rule; construct: by the construct table's eager rule).
struct Call {
  const ir::Equation* equation = nullptr;
  nx::ops::TensorType type;  // call: the result's type
  std::vector<std::int32_t> inputs;    // tensor registers
  std::vector<std::int32_t> outputs;   // tensor registers
  // A primitive whose rule computes into a given buffer (Rules::into): the
  // tensor register of its result's type, dead by then, whose buffer it
  // takes when nothing else holds it (-1: none), and the index of its result
  // in the code's results (-1 when it is none), for a call writing into the
  // caller's buffers (vm/memory_plan.cpp).
  std::int32_t recycled = -1;
  std::int32_t result = -1;
  // A dynamic_update_slice whose operand dies there: the operand's
  // register, whose buffer it writes its update into when nothing else
  // holds it (a loop carrying a buffer it writes a row of per trip copies
  // nothing then); -1: none.
  std::int32_t donor = -1;
};

// A fused elementwise kernel: `steps` computed over blocks of `size`
// elements, then `reductions` fed by them. Its slots are the values it
// reads and computes.
struct FusedKernel {
  enum class Source : std::uint8_t {
    tensor,    // t[reg], of the kernel's shape (made C-order when it is not)
    element,   // t[reg], one element, broadcast
    rows,      // t[reg], of the kernel's trailing axes: one row, repeated along the leading ones
    columns,   // t[reg], of the kernel's leading axes: one element per row, repeated along it
    broadcast,  // t[reg], broadcast along any other axes ([3, 1, 5] in [3, 4, 5]): gathered per block
    view,      // t[reg]'s elements in C order from `offset` (a slice or reshape that is a run of them)
    indexed,   // rows of t[reg] along an axis at the indices of slot `indices`: a take, gathered per block
    whole,     // t[reg], read in place by the kernel's gathers and scatters (their indices, a scatter's
               // operand); no step reads it
    scalar,    // s[reg], broadcast
    computed,  // a step's result: kept in a block buffer, or written to t[reg]
  };
  struct Slot {
    Source source = Source::computed;
    std::int32_t reg = -1;  // computed: the output register, -1 for a temporary
    nx::DType dtype = nx::DType::float32;
    std::int64_t offset = 0;  // view: the first element
    std::int32_t indices = -1;  // indexed: the slot of its indices
    // computed, written: the tensor registers of operands of its dtype
    // whose values die here and that no later step reads, -1 past the last;
    // the first whose buffer nothing else holds at run time is written in
    // place. Else `recycled`: a register of its type dead before the
    // kernel, whose buffer it takes when nothing else holds it
    // (vm/memory_plan.cpp).
    std::array<std::int32_t, 2> donors{-1, -1};
    std::int32_t recycled = -1;
    // computed, written: the index of the result it is in the code's
    // results, -1 when it is not one (a call writing into the caller's
    // buffers may compute it there).
    std::int32_t result = -1;
    // computed, a temporary: the block buffer holding it (shared by
    // temporaries whose lives do not overlap)
    std::int32_t buffer = -1;
    // A value of one element per row of the kernel (computed by a step over
    // the block's rows, or read by one): its shape, in `shapes`; -1 for the
    // kernel's shape (or a scalar's, an element's).
    std::int32_t shape = -1;
  };
  // A broadcast slot, gathered per block, with its strides along the
  // kernel's axes (in elements of its C-order elements; 0 along an axis it
  // is broadcast along).
  struct Gathered {
    std::int32_t slot;
    boost::container::small_vector<std::int64_t, 6> strides;
  };
  // How a take or a scatter_add along `axis` addresses its rows: the
  // operand as slabs of `length` rows of `row` elements (the axis and the
  // axes after it), the gathered side as slabs of `count` rows, one per
  // index (its rows in order: row q is index q % count of slab q / count).
  struct Rows {
    std::int64_t axis = 0, row = 1, length = 0, count = 0;
    nx::ops::IndexMode mode = nx::ops::IndexMode::clamp;
  };
  // An indexed slot, gathered per block by `gather` (ops/indexing.hpp: its
  // indices' dtype and mode).
  struct Indexed {
    std::int32_t slot;
    Rows rows;
    nx::ops::GatherRows gather = nullptr;
    bool in_place = false;  // read in place by a paired step (Step::Over::paired), not gathered per block
  };
  // A scatter_add of a step's value (`slot`) into a copy of the operand in
  // slot `operand`, written to t[out], by the indices in slot `indices`:
  // each block's rows added as soon as they are computed, blocks in order
  // on one thread (eager's order of the adds: its bits).
  struct Scattered {
    std::int32_t slot = -1, indices = -1, operand = -1;
    std::int32_t out = -1;  // the result's tensor register
    nx::Shape shape;   // the operand's and the result's
    Rows rows;
    nx::ops::ScatterRows scatter = nullptr;
    nx::ops::kernels::BinaryRow add = nullptr;
  };
  static constexpr std::size_t max_scatters = 8;
  // Where a slot's elements of a block are, planned with the kernel's
  // memory (vm/kernel_memory.cpp) but for the base address, which each run
  // finds in its frame.
  struct Place {
    enum class Kind : std::uint8_t {
      memory,     // base + begin * stride (a stride of 0 broadcasts one element)
      temporary,  // at `offset` in the thread's block buffers
      repeated,   // at `offset` in the rows buffer, for every block: a row repeated over a block of whole rows
      row,        // base + begin % row: a block within one row
      column,     // base + begin / row, broadcast: a block within one row
      columns,    // at `offset` in the thread's block buffers: each row's element repeated along it
      gathered,   // at `offset` in the thread's block buffers: gathered from base by the slot's strides
      per_row,    // base + begin / row: one element per row of the block
    };
    Kind kind = Kind::memory;
    std::int64_t stride = 1;
    std::size_t offset = 0;
    std::size_t size = 0;  // of an element
  };
  struct Step {
    // What it computes in a block of n elements (of whole rows of `row`):
    // the block's elements; one element per row (a value of the kernel's
    // leading axes, as `len` of [n, 1] in a kernel of [n, 2] points); each
    // row reduced to its element (its `row.reduce`: the eager loop of short
    // rows); each row's element repeated along it (a per-row value read by
    // an elementwise step); or the block's elements of a binary primitive
    // of two gathered operands, read where their indices point
    // (`row.paired`: `take(x, b) - take(x, a)` copies no row).
    enum class Over : std::uint8_t { elements, rows, reduce, spread, paired };
    Over over = Over::elements;
    nx::ops::Family family{};  // unary, binary, select or convert; reduce (Over::reduce)
    nx::ops::Prim prim{};
    std::int32_t out = 0;
    std::int32_t in[3] = {0, 0, 0};
    RowLoop row{};
    // The slots it reads.
    std::span<const std::int32_t> inputs() const {
      return {in, family == nx::ops::Family::binary ? 2u : family == nx::ops::Family::select ? 3u : 1u};
    }
  };
  // A step's result reduced over all its elements (sum(x * x): one pass)
  // or over its trailing axes, block by block in the eager reduction's
  // segments, so the bits are eager's.
  struct Reduction {
    nx::ops::Prim prim{};
    std::int32_t slot = 0;  // the slot reduced
    Location out;           // the result
    nx::Shape shape;        // the result's: the leading axes kept ([] for all)
    nx::ops::kernels::ReducePieces pieces{};
    nx::ops::kernels::ShortRows short_rows = nullptr;  // rows of the kernel's `reduced` elements, when they are short
  };
  static constexpr std::size_t max_reductions = 8;
  static constexpr std::int64_t block = 1024;  // the elements a kernel computes at a time

  nx::Shape shape;
  std::int64_t size = 0;
  std::vector<nx::Shape> shapes;  // of its per-row values (Slot::shape)
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<Reduction> reductions;  // at most max_reductions
  std::vector<Scattered> scatters;    // at most max_scatters; a kernel has these or reductions, not both
  std::vector<std::size_t> buffers;   // the element size of each temporaries' block buffer
  // The broadcast slots and the indexed ones (compile.cpp).
  std::vector<Gathered> gathered;
  std::vector<Indexed> indexed;
  // Each slot's place; the slots spread over each block first (columns);
  // the bytes of a thread's block buffers, and of the rows operands
  // repeated over a block (read by every thread: in the calling thread's
  // rows buffer).
  std::vector<Place> places;
  std::vector<std::int32_t> spread;
  std::size_t block_bytes = 0, rows_bytes = 0;
  // One block of at most one_block_slots slots in memory or temporaries,
  // and no reductions: its steps run on its slots' base addresses
  // (vm/fused_kernel.cpp; through Blocks it costs a W6 call ~9% more: the
  // block's addresses found again).
  static constexpr std::size_t one_block_slots = 32;
  bool single_block = false;
  // The operands in memory, read or written in order (tensors, views,
  // written results), and the cache lines of a whole block of the widest
  // of them asked of the caches before each step, [first, last).
  std::vector<std::int32_t> fetched;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fetch_lines;
  // Per slot: whether its step writes it past the caches (its streaming
  // row loop: a large result no later step reads).
  std::vector<bool> streamed;
  // The length of the rows the kernel runs in (0: none), its rows
  // operands': its blocks never cross a row boundary (whole rows, or parts
  // of one row).
  std::int64_t row = 0;
  // The elements each result of its reductions reduces (whole rows).
  std::int64_t reduced = 0;

  // Its promotion to machine code (vm/native/fused_loop.cpp): shared by the
  // copies of this kernel, freed with the last.
  std::shared_ptr<native::Unit> native = std::make_shared<native::Unit>(native::promoted_elements);

  const nx::Shape& shape_of(const Slot& s) const { return s.shape < 0 ? shape : shapes[std::size_t(s.shape)]; }
};

struct Code;

// A scan: its step compiled, its inputs and outputs in the enclosing frame.
struct ScanOp {
  std::shared_ptr<const Code> step;
  ir::ScanInfo info;
  std::vector<Location> inputs;
  std::vector<Location> outputs;
  std::vector<nx::ops::TensorType> output_types;
  std::vector<bool> rows_read;  // per xs: whether the step reads its row (a row no one reads is not put)
  // Its promotion to machine code (vm/native/): shared by the copies of
  // this scan, freed with the last.
  std::shared_ptr<native::Unit> native = std::make_shared<native::Unit>();
};

// A construct run by sub-codes (body, cond, iterate): `codes` are its
// programs compiled, in order.
struct Invoke {
  const ir::Equation* equation = nullptr;
  std::vector<std::shared_ptr<const Code>> codes;
  std::vector<Location> inputs;
  std::vector<Location> outputs;
  // An iterate's promotion to machine code (vm/native/; the others': none).
  std::shared_ptr<native::Unit> native = std::make_shared<native::Unit>();
};

struct Code {
  std::shared_ptr<const ir::Program> program;  // owns the equations calls point to
  // The program a call on traced values evaluates, when not `program`: a
  // compiled function's before its loops' invariants were hoisted (a
  // derivative through the call then has the bits of the function's own).
  std::shared_ptr<const ir::Program> traced;
  std::vector<Instruction> instructions;
  std::vector<Scalar> scalars;         // the scalar registers' initial contents (constants)
  std::vector<nx::DType> scalar_types;
  std::vector<nx::Tensor> tensors;     // the tensor registers' initial contents (constants)
  std::vector<Location> constants;     // the registers holding constants
  std::vector<nx::Tensor> constant_values;  // every constant of the program
  std::vector<Location> params, results;
  // Per result: its register's last use as a result (moved out of a
  // finished frame). (Bytes, not std::vector<bool>: read on every call.)
  std::vector<std::uint8_t> moved_out;
  bool takes_donated = false;   // kernels may take donated parameters' buffers (a call's own code)
  // Every result is computed into a buffer the memory plan chose (fresh, a
  // dead value's held by nothing else, or a donated parameter's taken): on
  // the VM, no result shares storage with an argument or a constant.
  bool results_apart = false;
  // A run may reach a check (compile.cpp): it runs in a CheckScope.
  bool may_check = true;
  // A loop's step: the tensor registers of its carry results that a run
  // writes (not a parameter's, not a constant's). The loop empties them once
  // the carry has moved to the parameters, so each parameter holds its
  // carry alone and the next run may write in place of it (memory_plan.hpp).
  std::vector<std::int32_t> emptied_after_run;
  std::vector<Call> calls;
  std::vector<FusedKernel> kernels;
  std::vector<ScanOp> scans;
  std::vector<Invoke> invokes;
  std::vector<std::vector<std::int32_t>> releases;  // tensor registers whose values are dead, per release
  // The instructions computing what the hoisting pass moved out of a loop
  // (ir::Equation::hoisted), each with the loop's instruction: for the
  // listing alone.
  struct Hoisted {
    std::size_t instruction = 0, loop = 0;
  };
  std::vector<Hoisted> hoisted;
  // Per instruction, where the equation it computes was traced
  // (ir::Equation::site; a kernel: its first equation's that has one), and
  // the lanes of a map its result holds (ir::Equation::lanes; none for a
  // kernel). For the listing, stepi, the profile and the NaN hunt; shorter
  // than `instructions` when the last have neither.
  struct Origin {
    rune::detail::CallSite site;
    ir::Lanes lanes;
  };
  std::vector<Origin> origins;
  Origin origin_of(std::size_t pc) const { return pc < origins.size() ? origins[pc] : Origin{}; }
  rune::detail::CallSite site_of(std::size_t pc) const { return origin_of(pc).site; }
};

}  // namespace rune::vm
