// Creation functions: they always make concrete values (under a trace they
// are constants of the program).
#include <cmath>
#include <cstring>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace nx {

namespace {
void check_shape(std::string_view api, const Shape& shape) {
  for (auto d : shape)
    if (d < 0) ops::fail(api, "shape " + to_string(shape) + " has a negative length");
}

Tensor filled(std::string_view api, DType dtype, const Shape& shape, double value) {
  check_shape(api, shape);
  return ops::filled(dtype, shape, value);
}

// The dtype and shape of t, which must hold a value.
const Tensor& like(std::string_view api, const Tensor& t) {
  if (!t.defined()) ops::fail(api, "the tensor holds no value (it was default-constructed)");
  return t;
}

Tensor from_doubles(DType dtype, const Shape& shape, const std::vector<double>& values) {
  return detail::create_from(dtype, shape, float64, values.data(), values.size());
}
}  // namespace

namespace detail {
Tensor create_from(DType dtype, const Shape& shape, DType source, const void* data, std::size_t count) {
  check_shape("nx::create", shape);
  if (std::int64_t(count) != numel(shape))
    ops::fail("nx::create", "shape " + to_string(shape) + " holds " + std::to_string(numel(shape)) +
                                " elements, got " + std::to_string(count) + " values");
  Tensor raw = ops::make_tensor(source, shape);
  if (count) std::memcpy(ops::data_of<char>(raw), data, count * size_of(source));
  return ops::convert_elements(raw, dtype);
}
}  // namespace detail

Tensor create(DType dtype, const Shape& shape, std::initializer_list<double> values) {
  return detail::create_from(dtype, shape, float64, values.begin(), values.size());
}

Tensor scalar(DType dtype, double value) { return filled("nx::scalar", dtype, {}, value); }
Tensor full(DType dtype, const Shape& shape, double value) { return filled("nx::full", dtype, shape, value); }
Tensor zeros(DType dtype, const Shape& shape) { return filled("nx::zeros", dtype, shape, 0); }
Tensor ones(DType dtype, const Shape& shape) { return filled("nx::ones", dtype, shape, 1); }
Tensor zeros_like(const Tensor& t) { return full_like(like("nx::zeros_like", t), 0); }
Tensor ones_like(const Tensor& t) { return full_like(like("nx::ones_like", t), 1); }
Tensor full_like(const Tensor& t, double value) {
  return ops::filled(like("nx::full_like", t).dtype(), t.shape(), value);
}

Tensor arange(DType dtype, double start, double stop, double step) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop))
    ops::fail("nx::arange", "start, stop and step must be finite and step nonzero");
  double count = std::ceil((stop - start) / step);
  std::int64_t n = count > 0 ? std::int64_t(count) : 0;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = start + double(i) * step;
  return from_doubles(dtype, {n}, v);
}

// As NumPy: start + i * step, with the last element exactly stop.
Tensor linspace(DType dtype, double start, double stop, std::int64_t n) {
  if (n < 0) ops::fail("nx::linspace", "n = " + std::to_string(n) + " is negative");
  std::vector<double> v(static_cast<std::size_t>(n));
  double step = n > 1 ? (stop - start) / double(n - 1) : 0;
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = start + double(i) * step;
  if (n > 1) v.back() = stop;
  return from_doubles(dtype, {n}, v);
}

Tensor eye(DType dtype, std::int64_t n) {
  if (n < 0) ops::fail("nx::eye", "n = " + std::to_string(n) + " is negative");
  std::vector<double> v(std::size_t(n * n), 0.);
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i * n + i)] = 1;
  return from_doubles(dtype, {n, n}, v);
}

}  // namespace nx
