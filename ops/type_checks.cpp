#include "ops/type_checks.hpp"

#include <algorithm>

#include "ops/concrete.hpp"

namespace nx::ops {

namespace {
std::string accepted_classes(std::uint8_t mask) {
  static const std::pair<std::uint8_t, const char*> names[] = {
      {B, "bool"}, {S, "signed integer"}, {U, "unsigned integer"}, {F, "float"}, {C, "complex"}};
  std::vector<std::string> parts;
  for (auto [bit, text] : names)
    if (mask & bit) parts.emplace_back(text);
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += i + 1 == parts.size() ? " or " : ", ";
    out += parts[i];
  }
  return out;
}
}  // namespace

void check_accepts(Prim p, const Tensor& operand) { check_accepts(info(p).api, p, operand); }

void check_accepts(std::string_view api, Prim p, const Tensor& operand) {
  check_accepts(api, p, operand.dtype(), describe(operand));
}

void check_accepts(std::string_view api, Prim p, DType d, const std::string& subject) {
  const std::uint8_t accepts = info(p).accepts;
  if (!(accepts & dtype_class(d)))
    fail(api, subject + " is not supported (it takes " + accepted_classes(accepts) + " tensors)");
}

void check_same_dtype(Prim p, std::span<const Tensor> operands) {
  for (const Tensor& t : operands.subspan(1))
    if (t.dtype() != operands[0].dtype())
      fail(info(p).api, "dtypes " + std::string(name(operands[0].dtype())) + " and " + std::string(name(t.dtype())) +
                            " differ (convert one with nx::cast)");
}

void check_defined(std::string_view api, std::span<const Tensor> operands) {
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (!operands[i].defined())
      fail(api, "operand " + std::to_string(i) + " holds no value (it was default-constructed)");
}

DType result_dtype(Prim p, DType d, const Params& params) {
  switch (info(p).result) {
    case ResultDType::Same: return d;
    case ResultDType::Bool: return DType::bool_;
    case ResultDType::Real: return d == complex64 ? float32 : d == complex128 ? float64 : d;
    case ResultDType::Param: return params.dtype;
    case ResultDType::Int32: return int32;
  }
  return d;
}

std::int64_t normalize_axis(std::string_view api, std::int64_t axis, std::int64_t ndim, const Tensor& t) {
  if (axis < -ndim || axis >= ndim)
    fail(api, "axis " + std::to_string(axis) + " is out of range for " + describe(t));
  return axis < 0 ? axis + ndim : axis;
}

Axes normalize_axes(std::string_view api, const Axes& axes, const Tensor& t) {
  Axes out;
  if (axes.empty()) {
    for (std::int64_t i = 0; i < t.ndim(); ++i) out.push_back(i);
    return out;
  }
  for (auto a : axes) out.push_back(normalize_axis(api, a, t.ndim(), t));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    fail(api, "an axis is repeated in " + to_string(axes));
  return out;
}

DType accumulation_dtype(DType d) {
  if (d == bool_ || d == int8 || d == int16 || d == int32) return int64;
  if (is_unsigned(d)) return uint64;
  return d;
}

TensorType gathered_type(Prim p, const Tensor& x, std::int64_t count) {
  check_accepts(p, x);
  Shape shape = x.shape();
  shape.insert(shape.begin(), count);
  return {x.dtype(), shape, x.placement()};
}

TensorType row_sum_type(Prim p, const Tensor& x, std::int64_t count, std::string_view row) {
  check_accepts(p, x);
  if (x.ndim() == 0 || x.shape()[0] != count)
    fail(info(p).api, "a transposed gather takes one row per " + std::string(row) + " (" + std::to_string(count) +
                          "), got " + describe(x));
  return {x.dtype(), Shape(x.shape().begin() + 1, x.shape().end()), x.placement()};
}

}  // namespace nx::ops
