// The dispatch loop, and the scan loop that runs a step's code per row.
#include "vm/machine.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>

#include <boost/container/small_vector.hpp>

#include "ir/eval.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "vm/listing.hpp"

namespace rune::vm {

namespace {

// RUNE_VM_TRACE=1 prints every instruction executed, with its result, on
// stderr (read once).
const bool tracing = [] {
  const char* v = std::getenv("RUNE_VM_TRACE");
  return v && std::atoi(v) != 0;
}();

using Operands = boost::container::small_vector<nx::Tensor, 4>;

void run_call(const Call& call, Frame& f) {
  Operands in;
  for (std::int32_t r : call.inputs) in.push_back(f.tensors[std::size_t(r)]);
  const ir::Equation& eq = *call.equation;
  if (eq.kind == ir::OpKind::primitive) {
    f.tensors[std::size_t(call.outputs[0])] = nx::ops::bind(eq.prim, std::span<const nx::Tensor>(in.data(), in.size()), eq.params);
    return;
  }
  std::vector<nx::Tensor> out = ir::bind_construct(eq, std::span<const nx::Tensor>(in.data(), in.size()), ir::entry_point(eq));
  for (std::size_t k = 0; k < out.size() && k < call.outputs.size(); ++k)
    f.tensors[std::size_t(call.outputs[k])] = std::move(out[k]);
}

// Copies between frames (a scan's and its step's): the same file on both
// sides, as a value's type decides its file.
void copy(Frame& to, Location at, const Frame& from, Location source) {
  if (at.scalar) to.scalars[std::size_t(at.index)] = from.scalars[std::size_t(source.index)];
  else to.tensors[std::size_t(at.index)] = from.tensors[std::size_t(source.index)];
}

// Row `row` of xs, as the step's parameter at `at`.
void put_row(Frame& step, Location at, const nx::Tensor& xs, std::int64_t row) {
  const auto& x = *xs.impl();
  const std::int64_t offset = x.offset + row * x.strides[0];
  if (at.scalar) {
    std::memcpy(step.scalars[std::size_t(at.index)].bytes,
                static_cast<const char*>(x.storage->data) + offset * std::int64_t(nx::size_of(x.dtype)),
                nx::size_of(x.dtype));
    return;
  }
  nx::Shape shape(x.shape.begin() + 1, x.shape.end());
  nx::ops::Strides strides(x.strides.begin() + 1, x.strides.end());
  step.tensors[std::size_t(at.index)] = nx::ops::make_view(xs, shape, strides, offset);
}

// Writes the step's result at `at` into row `row` of the stacked ys.
void put_y(const nx::Tensor& ys, std::int64_t row, const Frame& step, Location at) {
  const std::size_t bytes = std::size_t(ys.impl()->strides.empty() ? 0 : ys.impl()->strides[0]) *
                            nx::size_of(ys.dtype());
  char* dst = nx::ops::base_address(*ys.impl()) + std::int64_t(bytes) * row;
  if (at.scalar) {
    std::memcpy(dst, step.scalars[std::size_t(at.index)].bytes, bytes);
    return;
  }
  const nx::Tensor y = nx::ops::contiguous(step.tensors[std::size_t(at.index)]);
  std::memcpy(dst, nx::ops::base_address(*y.impl()), bytes);
}

void run_scan(const ScanOp& scan, Frame& f) {
  const Code& step = *scan.step;
  const ir::ScanInfo& s = scan.info;
  const std::size_t carry = std::size_t(s.carry_count), xs_end = carry + std::size_t(s.xs_count);
  Frame sub(step);
  for (std::size_t k = 0; k < scan.inputs.size(); ++k)
    if (k < carry || k >= xs_end) copy(sub, step.params[k], f, scan.inputs[k]);
  std::vector<nx::Tensor> xs;
  for (std::size_t k = carry; k < xs_end; ++k) xs.push_back(f.tensors[std::size_t(scan.inputs[k].index)]);
  std::vector<nx::Tensor> ys;
  for (std::size_t k = carry; k < scan.output_types.size(); ++k)
    ys.push_back(nx::ops::make_tensor(scan.output_types[k].dtype, scan.output_types[k].shape));
  // The ys are written before the carry moves (a y may be a carry's
  // parameter), and the carry goes from the step's results to its
  // parameters through a copy (a result may be another carry's parameter).
  Frame carried(step);
  for (std::int64_t row = 0; row < s.length; ++row) {
    for (std::size_t k = 0; k < xs.size(); ++k) put_row(sub, step.params[carry + k], xs[k], row);
    execute(step, sub);
    for (std::size_t k = 0; k < ys.size(); ++k) put_y(ys[k], row, sub, step.results[carry + k]);
    for (std::size_t k = 0; k < carry; ++k) copy(carried, step.params[k], sub, step.results[k]);
    for (std::size_t k = 0; k < carry; ++k) copy(sub, step.params[k], carried, step.params[k]);
  }
  for (std::size_t k = 0; k < carry; ++k) copy(f, scan.outputs[k], sub, step.params[k]);
  for (std::size_t k = 0; k < ys.size(); ++k) f.tensors[std::size_t(scan.outputs[carry + k].index)] = ys[k];
}

template <bool Trace> void dispatch(const Code& code, Frame& f) {
  Scalar* s = f.scalars.data();
  for (const Instruction& in : code.instructions) {
    switch (in.op) {
      case Op::add_f64: s[in.dst].f64 = s[in.a].f64 + s[in.b].f64; break;
      case Op::sub_f64: s[in.dst].f64 = s[in.a].f64 - s[in.b].f64; break;
      case Op::mul_f64: s[in.dst].f64 = s[in.a].f64 * s[in.b].f64; break;
      case Op::div_f64: s[in.dst].f64 = s[in.a].f64 / s[in.b].f64; break;
      case Op::neg_f64: s[in.dst].f64 = -s[in.a].f64; break;
      case Op::add_f32: s[in.dst].f32 = s[in.a].f32 + s[in.b].f32; break;
      case Op::sub_f32: s[in.dst].f32 = s[in.a].f32 - s[in.b].f32; break;
      case Op::mul_f32: s[in.dst].f32 = s[in.a].f32 * s[in.b].f32; break;
      case Op::div_f32: s[in.dst].f32 = s[in.a].f32 / s[in.b].f32; break;
      case Op::neg_f32: s[in.dst].f32 = -s[in.a].f32; break;
      case Op::unary:
      case Op::convert: in.row.unary(1, s[in.a].bytes, 0, s[in.dst].bytes); break;
      case Op::binary: in.row.binary(1, s[in.a].bytes, 0, s[in.b].bytes, 0, s[in.dst].bytes); break;
      case Op::select:
        in.row.select(1, s[in.a].bytes, 0, s[in.b].bytes, 0, s[in.c].bytes, 0, s[in.dst].bytes);
        break;
      case Op::load: write(f, {true, in.dst}, f.tensors[std::size_t(in.a)]); break;
      case Op::box: f.tensors[std::size_t(in.dst)] = read(code, f, {true, in.a}); break;
      case Op::call:
      case Op::construct: run_call(code.calls[std::size_t(in.aux)], f); break;
      case Op::map: run_map(code.maps[std::size_t(in.aux)], f); break;
      case Op::scan: run_scan(code.scans[std::size_t(in.aux)], f); break;
    }
    if constexpr (Trace) std::cerr << "vm: " << trace_line(code, in, f) << '\n';
  }
}

}  // namespace

nx::Tensor read(const Code& code, const Frame& f, Location at) {
  if (!at.scalar) return f.tensors[std::size_t(at.index)];
  const nx::DType dtype = code.scalar_types[std::size_t(at.index)];
  nx::Tensor t = nx::ops::make_tensor(dtype, {});
  std::memcpy(nx::ops::base_address(*t.impl()), f.scalars[std::size_t(at.index)].bytes, nx::size_of(dtype));
  return t;
}

void write(Frame& f, Location at, const nx::Tensor& value) {
  if (!at.scalar) {
    f.tensors[std::size_t(at.index)] = value;
    return;
  }
  std::memcpy(f.scalars[std::size_t(at.index)].bytes, nx::ops::base_address(*value.impl()), nx::size_of(value.dtype()));
}

void execute(const Code& code, Frame& frame) {
  if (tracing) dispatch<true>(code, frame);
  else dispatch<false>(code, frame);
}

std::vector<nx::Tensor> run(const Code& code, std::span<const nx::Tensor> args) {
  for (const nx::Tensor& t : args)
    if (t.impl()->storage->donated.load(std::memory_order_relaxed)) (void)nx::ops::elements_of(t, "rune::jit");
  Frame frame(code);
  for (std::size_t k = 0; k < args.size(); ++k) write(frame, code.params[k], args[k]);
  execute(code, frame);
  std::vector<nx::Tensor> results;
  results.reserve(code.results.size());
  for (Location at : code.results)
    results.push_back(read(code, frame, at));
  return results;
}

}  // namespace rune::vm
