// The scan loop: the step's code runs once per row in one frame, the carry
// staying in its registers. What moves per row is planned before the
// first: the rows of xs read in place (an element into a scalar register,
// or a view), the carry copied from the step's results to its parameters
// (the result registers then emptied, so that the next row may write a
// carry in place of its previous value: Code::emptied_after_run), and each result
// written into its row of the stacked output.
#include <cstdint>
#include <cstring>

#include <boost/container/small_vector.hpp>

#include "ops/concrete.hpp"
#include "ops/nan_hunt.hpp"
#include "vm/machine.hpp"
#include "vm/observer.hpp"

namespace rune::vm {

namespace {

// Copies one element of `size` bytes (a constant size inlines the copy).
inline void copy_element(void* to, const void* from, std::size_t size) {
  switch (size) {
    case 8: std::memcpy(to, from, 8); break;
    case 4: std::memcpy(to, from, 4); break;
    case 2: std::memcpy(to, from, 2); break;
    default: std::memcpy(to, from, size); break;
  }
}

struct Move {
  std::int32_t from, to;
};

// One xs: its rows read into the step's parameter.
struct Rows {
  nx::Tensor xs;
  Location to;
  const char* base;       // row 0
  std::int64_t stride;    // bytes from a row to the next
  std::size_t size;       // a scalar parameter: the element's bytes
};

// One step result stacked into an output.
struct Stack {
  nx::Tensor ys;
  Location from;
  char* base;
  std::size_t row_bytes;
};

// (small vectors: a scan of a few carries, xs and ys allocates nothing
// beyond its stacked outputs, which come from nx's pools)
template <class T> using Few = boost::container::small_vector<T, 8>;

struct Plan {
  Few<Rows> rows;
  Few<Move> scalar_carry, tensor_carry;  // step result register -> parameter register
  Few<Stack> stacks;
};

Plan plan(const ScanOp& scan, const Frame& f) {
  const Code& step = *scan.step;
  const std::size_t carry = std::size_t(scan.info.carry_count), xs_end = carry + std::size_t(scan.info.xs_count);
  Plan p;
  for (std::size_t k = carry; k < xs_end; ++k) {
    if (!scan.rows_read[k - carry]) continue;
    const nx::Tensor& xs = f.tensors[std::size_t(scan.inputs[k].index)];
    const auto& x = *xs.impl();
    const std::size_t size = nx::size_of(x.dtype);
    p.rows.push_back({xs, step.params[k], nx::ops::base_address(x), x.strides[0] * std::int64_t(size), size});
  }
  for (std::size_t k = 0; k < carry; ++k) {
    const Location from = step.results[k], to = step.params[k];
    (to.scalar ? p.scalar_carry : p.tensor_carry).push_back({from.index, to.index});
  }
  for (std::size_t k = carry; k < scan.output_types.size(); ++k) {
    const nx::ops::TensorType& t = scan.output_types[k];
    nx::Tensor ys = nx::ops::make_tensor(t.dtype, t.shape);
    const std::size_t row_bytes = std::size_t(nx::numel(t.shape) / (t.shape[0] ? t.shape[0] : 1)) * nx::size_of(t.dtype);
    p.stacks.push_back({ys, step.results[k], nx::ops::base_address(*ys.impl()), row_bytes});
  }
  return p;
}

void put_row(Frame& step, const Rows& r, std::int64_t row) {
  const char* at = r.base + row * r.stride;
  if (r.to.scalar) return copy_element(step.scalars[std::size_t(r.to.index)].bytes, at, r.size);
  const auto& x = *r.xs.impl();
  nx::Shape shape(x.shape.begin() + 1, x.shape.end());
  nx::ops::Strides strides(x.strides.begin() + 1, x.strides.end());
  step.tensors[std::size_t(r.to.index)] = nx::ops::make_view(r.xs, shape, strides, x.offset + row * x.strides[0]);
}

void put_y(const Stack& s, std::int64_t row, const Frame& step) {
  char* at = s.base + std::int64_t(s.row_bytes) * row;
  if (s.from.scalar) return copy_element(at, step.scalars[std::size_t(s.from.index)].bytes, s.row_bytes);
  const nx::Tensor y = nx::ops::contiguous(step.tensors[std::size_t(s.from.index)]);
  std::memcpy(at, nx::ops::base_address(*y.impl()), s.row_bytes);
}

// The step run per row on the VM.
void interpret(const ScanOp& scan, const Plan& p, Frame& sub) {
  const Code& step = *scan.step;
  // The ys are written before the carry moves (a y may be a carry's
  // parameter), and the carry moves through a copy (a result may be
  // another carry's parameter).
  Few<Scalar> scalars(p.scalar_carry.size());
  Few<nx::Tensor> tensors(p.tensor_carry.size());
  Scalar* s = sub.scalars.data();
  std::int64_t row = 0;
  try {
    for (; row < scan.info.length; ++row) {
      for (const Rows& r : p.rows) put_row(sub, r, row);
      execute(step, sub);
      for (const Stack& y : p.stacks) put_y(y, row, sub);
      for (std::size_t k = 0; k < scalars.size(); ++k) scalars[k] = s[p.scalar_carry[k].from];
      for (std::size_t k = 0; k < scalars.size(); ++k) s[p.scalar_carry[k].to] = scalars[k];
      for (std::size_t k = 0; k < tensors.size(); ++k) tensors[k] = sub.tensors[std::size_t(p.tensor_carry[k].from)];
      for (std::int32_t reg : step.emptied_after_run) sub.tensors[std::size_t(reg)] = nx::Tensor();
      for (std::size_t k = 0; k < tensors.size(); ++k)
        sub.tensors[std::size_t(p.tensor_carry[k].to)] = std::move(tensors[k]);
    }
  } catch (const nx::ops::NonFiniteError& e) {  // (a NaN hunt's: the row it was made in)
    nx::ops::rethrow_non_finite(e, "in row " + std::to_string(row) + " of a scan");
  }
}

// The rows the plan moves, as a promoted loop reads them (native.hpp).
using Words = boost::container::small_vector<std::int64_t, 16>;
Words words_of(const Plan& p) {
  Words w;
  for (const Rows& r : p.rows) w.push_back(std::int64_t(reinterpret_cast<std::uintptr_t>(r.base)));
  for (const Rows& r : p.rows) w.push_back(r.stride);
  for (const Stack& y : p.stacks) w.push_back(std::int64_t(reinterpret_cast<std::uintptr_t>(y.base)));
  return w;
}

}  // namespace

void run_scan(const ScanOp& scan, Frame& f) {
  const Code& step = *scan.step;
  const std::size_t carry = std::size_t(scan.info.carry_count), xs_end = carry + std::size_t(scan.info.xs_count);
  Frame sub(step);
  for (std::size_t k = 0; k < scan.inputs.size(); ++k)
    if (k < carry || k >= xs_end) copy(sub, step.params[k], f, scan.inputs[k]);
  const Plan p = plan(scan, f);
  const auto promoted = interpreting_only() ? nullptr
                                               : native::as_loop<native::ScanLoop>(scan.native->loop(
                                                     scan.info.length, native::emit_scan, &scan, "a scan step", "rows"));
  if (promoted) {
    const Words words = words_of(p);
    promoted(sub.scalars.data(), words.data(), scan.info.length);
  } else {
    interpret(scan, p, sub);
  }
  for (std::size_t k = 0; k < carry; ++k) copy(f, scan.outputs[k], sub, step.params[k]);
  for (std::size_t k = 0; k < p.stacks.size(); ++k)
    f.tensors[std::size_t(scan.outputs[carry + k].index)] = p.stacks[k].ys;
}

}  // namespace rune::vm
