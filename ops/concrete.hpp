// Concrete tensors: making them, viewing them, reaching their elements.
#pragma once

#include <string_view>

#include "rune/tensor.hpp"

namespace nx::ops {

using detail::Strides;

Strides contiguous_strides(const Shape& shape);
// (inline: every compiled call asks it of its operands)
inline bool is_contiguous(const detail::TensorImpl& t) {
  std::int64_t step = 1;
  for (std::size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != step) return false;
    step *= t.shape[i];
  }
  return true;
}

// A fresh C-order tensor with uninitialized elements.
Tensor make_tensor(DType dtype, const Shape& shape);
// A view of base's storage with the given layout.
Tensor make_view(const Tensor& base, const Shape& shape, const Strides& strides, std::int64_t offset);
// t itself when it is C-order contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& t);
// A C-order copy of t's elements in storage of its own.
Tensor copy(const Tensor& t);
// The buffer of `donated` (nx::donate's handle, C-order, rune's own memory)
// in a tensor of its own: its storage is left empty and marked donated, so
// every value viewing it throws when read.
Tensor take_buffer(const Tensor& donated);

// The address of element [0, ..., 0].
inline char* base_address(const detail::TensorImpl& t) {
  return static_cast<char*>(t.storage->data) + t.offset * std::int64_t(size_of(t.dtype));
}
template <class T> T* data_of(const Tensor& t) { return reinterpret_cast<T*>(base_address(*t.impl())); }

// The concrete value whose elements t shows: t itself, or the primal below
// the tracers that wrap it. Throws, naming `api` (the reading function), when
// t is undefined, a stand-in of a trace, or donated.
Tensor elements_of(const Tensor& t, std::string_view api);
std::string describe(const Tensor& t);  // "float64 [3]"

// t's elements converted to `to` (t itself when it has that dtype), computed
// here and now: eager rules use it instead of binding a conversion.
Tensor convert_elements(const Tensor& t, DType to);

// A fresh tensor of `shape` whose every element is `value` converted to
// dtype (nx::full and its family, pad's fill; a scalar is the hot path of
// `x + 1.`).
Tensor filled(DType dtype, const Shape& shape, double value);
// Sets every element of `out` (C order, rune's own memory) to `value`
// converted to its dtype.
void fill(const Tensor& out, double value);

// Copies the elements of src into dst's layout (same shape and dtype).
void copy_elements(const detail::TensorImpl& src, const detail::TensorImpl& dst);

}  // namespace nx::ops
