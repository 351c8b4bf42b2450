// Creation functions: they always make concrete values (under a trace they
// are constants of the program).
#include <cmath>
#include <cstring>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/sizes.hpp"
#include "rune/nx.hpp"

namespace nx {

namespace {
using ops::check_shape;

Tensor filled(std::string_view api, DType dtype, const Shape& shape, double value) {
  check_shape(api, shape);
  return ops::filled(dtype, shape, value);
}

// The dtype and shape of t, which must hold a value.
const Tensor& like(std::string_view api, const Tensor& t) {
  if (!t.defined()) ops::fail(api, "the tensor holds no value (it was default-constructed)");
  return t;
}

// The vector of f(0), ..., f(n - 1) computed in float64, converted to dtype.
template <class F> Tensor generated(DType dtype, std::int64_t n, F f) {
  Tensor v = ops::make_tensor(float64, {n});
  double* at = ops::data_of<double>(v);
  for (std::int64_t i = 0; i < n; ++i) at[i] = f(i);
  return ops::convert_elements(v, dtype);
}

// A tensor viewing caller memory (nx::borrow).
Tensor borrowed(DType dtype, const Shape& shape, const void* data, bool writable) {
  check_shape("nx::borrow", shape);
  const std::size_t size = size_of(dtype);
  if (!data && numel(shape) > 0) ops::fail("nx::borrow", "the pointer is null");
  if (reinterpret_cast<std::uintptr_t>(data) % size != 0)
    ops::fail("nx::borrow", "the pointer is not aligned to " + std::string(name(dtype)) + "'s " + std::to_string(size) +
                                " bytes");
  boost::intrusive_ptr<detail::Storage> storage(new detail::Storage);
  storage->data = const_cast<void*>(data);  // (written only where `writable`)
  storage->bytes = std::size_t(numel(shape)) * size;
  storage->borrowed = true;
  storage->writable = writable;
  boost::intrusive_ptr<detail::TensorImpl> t(new detail::TensorImpl);
  t->dtype = dtype;
  t->shape = shape;
  t->strides = ops::contiguous_strides(shape);
  t->storage = std::move(storage);
  return Tensor(std::move(t));
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

Tensor borrow(DType dtype, const Shape& shape, const void* data) { return borrowed(dtype, shape, data, false); }
Tensor borrow(DType dtype, const Shape& shape, void* data) { return borrowed(dtype, shape, data, true); }

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
  // NumPy's count, ceil((stop - start) / step), less the values that its
  // rounding brings to stop or past it (np.arange(1, 1.3, 0.1) ends with
  // 1.3000000000000003): every value is before stop.
  double count = std::ceil((stop - start) / step);
  auto before_stop = [&](double i) { return step > 0 ? start + i * step < stop : start + i * step > stop; };
  while (count > 0 && count <= double(ops::max_elements) && !before_stop(count - 1)) --count;
  if (count > double(ops::max_elements))
    ops::fail("nx::arange", "the range holds " + ops::more_than_a_value_holds());
  return generated(dtype, count > 0 ? std::int64_t(count) : 0, [&](std::int64_t i) { return start + double(i) * step; });
}

// As NumPy: start + i * step, with the last element exactly stop.
Tensor linspace(DType dtype, double start, double stop, std::int64_t n) {
  if (n < 0) ops::fail("nx::linspace", "n = " + std::to_string(n) + " is negative");
  check_shape("nx::linspace", {n});
  double step = n > 1 ? (stop - start) / double(n - 1) : 0;
  return generated(dtype, n, [&](std::int64_t i) { return n > 1 && i == n - 1 ? stop : start + double(i) * step; });
}

Tensor eye(DType dtype, std::int64_t n) {
  if (n < 0) ops::fail("nx::eye", "n = " + std::to_string(n) + " is negative");
  check_shape("nx::eye", {n, n});
  Tensor out = ops::filled(dtype, {n, n}, 0);
  Tensor diagonal = ops::make_view(out, {n}, {n + 1}, 0);
  ops::copy_elements(*ops::filled(dtype, {n}, 1).impl(), *diagonal.impl());
  return out;
}

}  // namespace nx
