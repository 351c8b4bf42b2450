// Tensor handles: making, viewing and reading concrete values.
#include <algorithm>
#include <cstring>
#include <utility>

#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "ops/kernels/iterate.hpp"
#include "ops/kernels/loops.hpp"
#include "rune/nx.hpp"

namespace nx {

// The handle nx::donate gives: a view of t's storage that a compiled call
// takes when it returns (jit/jit.cpp).
Tensor donate(const Tensor& t) {
  if (!t.defined()) ops::fail("nx::donate", "the tensor holds no value (it was default-constructed)");
  if (t.is_traced()) return t;  // a stand-in has no storage to give
  if (t.impl()->storage->borrowed)
    ops::fail("nx::donate", "the tensor borrows caller memory (nx::borrow), which is never donated");
  Tensor handle = ops::make_view(t, t.shape(), t.impl()->strides, t.impl()->offset);
  handle.impl()->donated_to_call = true;
  return handle;
}

void Tensor::throw_undefined() {
  throw std::invalid_argument("nx::Tensor: the tensor holds no value (it was default-constructed)");
}

namespace ops {

Strides contiguous_strides(const Shape& shape) {
  Strides s(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= shape[i];
  }
  return s;
}

Tensor make_tensor(DType dtype, const Shape& shape) {
  boost::intrusive_ptr<detail::TensorImpl> t = detail::adopt(new detail::TensorImpl);
  t->dtype = dtype;
  // (the shape and its C-order strides in one pass: every result is made here)
  const std::size_t rank = shape.size();
  t->shape.resize(rank, boost::container::default_init);
  t->strides.resize(rank, boost::container::default_init);
  std::int64_t step = 1;
  for (std::size_t i = rank; i-- > 0;) {
    t->shape[i] = shape[i];
    t->strides[i] = step;
    step *= shape[i];
  }
  t->storage = detail::Storage::allocate(std::size_t(step) * size_of(dtype));
  return Tensor(std::move(t));
}

Tensor take_buffer(const Tensor& donated) {
  detail::Storage& given = *donated.impl()->storage;
  boost::intrusive_ptr<detail::Storage> taken = detail::adopt(new detail::Storage);
  if (given.holds_inline()) {  // (the elements move with the buffer)
    std::memcpy(taken->inline_data, given.inline_data, detail::Storage::inline_bytes);
    taken->data = taken->inline_data;
    given.data = nullptr;
  } else {
    taken->data = std::exchange(given.data, nullptr);
  }
  taken->bytes = std::exchange(given.bytes, 0);
  given.donated.store(true);
  boost::intrusive_ptr<detail::TensorImpl> t(new detail::TensorImpl);
  t->dtype = donated.dtype();
  t->shape = donated.shape();
  t->strides = donated.impl()->strides;
  t->offset = donated.impl()->offset;
  t->storage = std::move(taken);
  return Tensor(std::move(t));
}

Tensor make_view(const Tensor& base, const Shape& shape, const Strides& strides, std::int64_t offset) {
  boost::intrusive_ptr<detail::TensorImpl> t = detail::adopt(new detail::TensorImpl);
  const auto& b = *base.impl();
  t->dtype = b.dtype;
  t->placement = b.placement;
  t->shape = shape;
  t->strides = strides;
  t->offset = offset;
  t->storage = b.storage;
  return Tensor(std::move(t));
}

Tensor contiguous(const Tensor& t) { return is_contiguous(*t.impl()) ? t : copy(t); }

Tensor copy(const Tensor& t) {
  Tensor out = make_tensor(t.dtype(), t.shape());
  copy_elements(*t.impl(), *out.impl());
  return out;
}

Tensor filled(DType dtype, const Shape& shape, double value) {
  Tensor out = make_tensor(dtype, shape);
  fill(out, value);
  return out;
}

namespace {
// The first element of t set to value, converted to t's dtype.
void set_first(const Tensor& t, double value) {
  visit_dtype(t.dtype(), [&](auto d) {
    using T = element_t<decltype(d)::value>;
    *data_of<T>(t) = kernels::convert_value<T>(value);
  });
}
}  // namespace

void fill(const Tensor& out, double value) {
  const Shape& shape = out.shape();
  if (shape.empty()) return set_first(out, value);  // (x + 1.: the hot path)
  Tensor one = make_tensor(out.dtype(), {});
  set_first(one, value);
  copy_elements(*make_view(one, shape, Strides(shape.size(), 0), 0).impl(), *out.impl());
}

std::string describe(const Tensor& t) {
  return std::string(name(t.dtype())) + " " + to_string(t.shape());
}

Tensor elements_of(const Tensor& t, std::string_view api) {
  if (!t.defined()) fail(api, "the tensor holds no value (it was default-constructed)");
  Tensor v = t;
  while (v.impl()->tracer) {
    auto below = v.impl()->tracer->primal();
    if (!below) throw TracedRead(std::string(api) + ": the value is traced by " + std::string(v.impl()->tracer->traced_by()));
    v = Tensor(std::move(below));
  }
  if (v.impl()->storage->donated.load(std::memory_order_relaxed))
    fail(api, describe(v) + " was donated to rune::jit");
  return v;
}

namespace {
template <class T> struct CopyRow {
  const char* src;
  char* dst;
  void operator()(const std::array<std::int64_t, 2>& off, std::int64_t n,
                  const std::array<std::int64_t, 2>& step) const {
    const T* s = reinterpret_cast<const T*>(src) + off[0];
    T* d = reinterpret_cast<T*>(dst) + off[1];
    if (step[0] == 1 && step[1] == 1) {
      std::memcpy(d, s, std::size_t(n) * sizeof(T));
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) d[i * step[1]] = s[i * step[0]];
  }
};

// A copy of a transposed view (its rows' stride 1, its columns' not) into
// C order goes by square tiles while it is small enough to run on one
// thread anyway: a row at a time, it reads a cache line per element, and
// lines a power of two apart crowd into a few cache sets (h^T, [256, 128]
// float32, in the MLP's backward pass: 34 us by rows, 19 by tiles). Larger
// copies keep the rows split over oneTBB (tiles on one thread fell behind
// them here from about 2 million elements). Element (i, j) of a matrix is
// src[i + j * src_column_stride], written to dst[i * dst_row_stride + j];
// walk's row functor runs over the matrices.
constexpr std::int64_t transpose_tile = 8;

template <class T> struct CopyTransposed {
  const char* src;
  char* dst;
  std::int64_t rows, cols, src_column_stride, dst_row_stride;
  void operator()(const std::array<std::int64_t, 2>& off, std::int64_t n,
                  const std::array<std::int64_t, 2>& step) const {
    for (std::int64_t m = 0; m < n; ++m)
      matrix(reinterpret_cast<const T*>(src) + off[0] + m * step[0], reinterpret_cast<T*>(dst) + off[1] + m * step[1]);
  }
  void matrix(const T* s, T* d) const {
    for (std::int64_t i0 = 0; i0 < rows; i0 += transpose_tile)
      for (std::int64_t j0 = 0; j0 < cols; j0 += transpose_tile) {
        const std::int64_t i1 = std::min(rows, i0 + transpose_tile), j1 = std::min(cols, j0 + transpose_tile);
        for (std::int64_t i = i0; i < i1; ++i)
          for (std::int64_t j = j0; j < j1; ++j) d[i * dst_row_stride + j] = s[i + j * src_column_stride];
      }
  }
};

bool transposed(const detail::TensorImpl& src, const detail::TensorImpl& dst) {
  const std::size_t nd = src.shape.size();
  return nd >= 2 && numel(src.shape) < parallel_grain && src.shape[nd - 2] >= transpose_tile / 2 &&
         src.shape[nd - 1] >= transpose_tile / 2 && src.strides[nd - 2] == 1 && src.strides[nd - 1] != 1 &&
         dst.strides[nd - 1] == 1;
}

template <class T> void copy_as(const detail::TensorImpl& src, const detail::TensorImpl& dst) {
  const char* s = base_address(src);
  char* d = base_address(dst);
  if (!transposed(src, dst)) return walk<2>(src.shape, {&src.strides, &dst.strides}, CopyRow<T>{s, d});
  const std::size_t nd = src.shape.size();
  const CopyTransposed<T> copy{s, d, src.shape[nd - 2], src.shape[nd - 1], src.strides[nd - 1], dst.strides[nd - 2]};
  if (nd == 2) return copy.matrix(reinterpret_cast<const T*>(s), reinterpret_cast<T*>(d));
  const Shape outer(src.shape.begin(), src.shape.end() - 2);
  const Strides src_outer(src.strides.begin(), src.strides.end() - 2);
  const Strides dst_outer(dst.strides.begin(), dst.strides.end() - 2);
  walk<2>(outer, {&src_outer, &dst_outer}, copy);
}

template <std::size_t Bytes> struct Bytes_ { unsigned char b[Bytes]; };
}  // namespace

void copy_elements(const detail::TensorImpl& src, const detail::TensorImpl& dst) {
  switch (size_of(src.dtype)) {
    case 1: return copy_as<std::uint8_t>(src, dst);
    case 2: return copy_as<std::uint16_t>(src, dst);
    case 4: return copy_as<std::uint32_t>(src, dst);
    case 8: return copy_as<std::uint64_t>(src, dst);
    default: return copy_as<Bytes_<16>>(src, dst);
  }
}

}  // namespace ops
}  // namespace nx
