// matmul: [..., m, k] x [..., k, n] with equal batch axes (nx::matmul
// broadcasts them first). float32/float64/complex go to cblas (OpenBLAS);
// other dtypes to a plain loop in the element's compute type.
//
// OpenBLAS runs on the calling thread only: its own workers wait for the
// next call spinning (sched_yield) on the other cores, and a 2-core machine
// then runs everything between products at half speed. A large product is
// cut into pieces of its result instead, run on oneTBB (whose workers
// sleep), each one cblas call; the pieces are fixed by the shapes, and
// OpenBLAS never splits a sum along k, so the bits do not depend on the
// thread count.
#include <cstdlib>
#include <utility>

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "ops/concrete.hpp"
#include "ops/kernels/loops.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {
namespace {

TensorType matmul_type(Prim p, std::span<const Tensor> x, const Params&) {
  check_same_dtype(p, x);
  check_accepts(p, x[0]);
  const Shape &a = x[0].shape(), &b = x[1].shape();
  const std::size_t n = a.size();
  if (n < 2 || b.size() != n || !std::equal(a.begin(), a.end() - 2, b.begin()) || a[n - 1] != b[n - 2])
    fail(info(p).api, "shapes " + to_string(a) + " and " + to_string(b) + " do not match for a matrix product");
  Shape out = a;
  out[n - 1] = b[n - 1];
  return {x[0].dtype(), out, x[0].placement()};
}

// How cblas reads a matrix view: its transpose flag and leading dimension,
// or nothing when neither axis is contiguous.
struct MatrixLayout {
  bool ok;
  CBLAS_TRANSPOSE trans;
  std::int64_t ld;
};
// The stride of an axis of length 1 is never used, and views may hold any
// there (0 in a broadcast): such an axis gets the leading dimension cblas
// checks for.
MatrixLayout blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  const std::int64_t row_ld = rows == 1 ? std::max<std::int64_t>(cols, 1) : rs;
  const std::int64_t col_ld = cols == 1 ? std::max<std::int64_t>(rows, 1) : cs;
  if ((cs == 1 || cols == 1) && row_ld >= std::max<std::int64_t>(cols, 1)) return {true, CblasNoTrans, row_ld};
  if ((rs == 1 || rows == 1) && col_ld >= std::max<std::int64_t>(rows, 1)) return {true, CblasTrans, col_ld};
  return {false, CblasNoTrans, 0};
}

// c (m x n, rows ldc apart) = a b, by one cblas call on this thread.
template <class T>
void gemm(MatrixLayout la, MatrixLayout lb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          const T* b, T* c, std::int64_t ldc) {
  static const bool one_thread = (openblas_set_num_threads(1), true);
  (void)one_thread;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, la.trans, lb.trans, m, n, k, 1.f, a, la.ld, b, lb.ld, 0.f, c, ldc);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasRowMajor, la.trans, lb.trans, m, n, k, 1., a, la.ld, b, lb.ld, 0., c, ldc);
  else {
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, std::complex<float>>)
      cblas_cgemm(CblasRowMajor, la.trans, lb.trans, m, n, k, &one, a, la.ld, b, lb.ld, &zero, c, ldc);
    else
      cblas_zgemm(CblasRowMajor, la.trans, lb.trans, m, n, k, &one, a, la.ld, b, lb.ld, &zero, c, ldc);
  }
}

// A product of at least twice this many multiply-adds is cut in two, and
// so on, into at most max_pieces pieces.
constexpr double piece_product = 1 << 23;
constexpr std::int64_t max_pieces = 16;

// c = a b (c in C order), in pieces on oneTBB when it is large: blocks of
// columns when it has fewer rows than columns (each piece then packs all
// of a, the smaller operand, and its own columns of b), else blocks of rows.
template <class T>
void gemm_in_pieces(MatrixLayout la, MatrixLayout lb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                    const T* b, T* c) {
  const bool by_columns = m < n;
  const std::int64_t extent = by_columns ? n : m;
  std::int64_t pieces = 1;
  while (pieces < max_pieces && 2 * pieces <= extent && double(m) * double(n) * double(k) >= 2 * pieces * piece_product)
    pieces *= 2;
  if (pieces == 1) return gemm<T>(la, lb, m, n, k, a, b, c, n);
  auto piece = [&](std::int64_t p) {
    const std::int64_t lo = extent * p / pieces, hi = extent * (p + 1) / pieces;
    if (by_columns)  // (columns lo.. of b: along its rows' stride when read transposed)
      gemm<T>(la, lb, m, hi - lo, k, a, b + lo * (lb.trans == CblasNoTrans ? 1 : lb.ld), c + lo, n);
    else
      gemm<T>(la, lb, hi - lo, n, k, a + lo * (la.trans == CblasNoTrans ? la.ld : 1), b, c + lo * n, n);
  };
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, pieces, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t p = r.begin(); p < r.end(); ++p) piece(p);
      },
      tbb::simple_partitioner());
}

template <class T>
void plain_matmul(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t ars, std::int64_t acs,
                  const T* b, std::int64_t brs, std::int64_t bcs, T* c) {
  using CT = kernels::compute_t<T>;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      CT sum = CT(0);
      for (std::int64_t l = 0; l < k; ++l)
        sum = kernels::Op<Prim::add>::scalar(
            sum, kernels::Op<Prim::mul>::scalar(kernels::convert_value<CT>(a[i * ars + l * acs]),
                                                kernels::convert_value<CT>(b[l * brs + j * bcs])));
      c[i * n + j] = kernels::convert_value<T>(sum);
    }
}

template <class T> void batched(const Tensor& A, const Tensor& B, const Tensor& C) {
  const auto &a = *A.impl(), &b = *B.impl();
  const std::size_t nd = a.shape.size();
  const std::int64_t m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  const std::int64_t batches = m * n == 0 ? 0 : C.numel() / (m * n);
  const T* pa = data_of<T>(A);
  const T* pb = data_of<T>(B);
  T* pc = data_of<T>(C);
  constexpr bool blas = std::is_same_v<T, float> || std::is_same_v<T, double> || kernels::is_cplx<T>;
  MatrixLayout la = blas_layout(m, k, a.strides[nd - 2], a.strides[nd - 1]);
  MatrixLayout lb = blas_layout(k, n, b.strides[nd - 2], b.strides[nd - 1]);
  for (std::int64_t i = 0; i < batches; ++i) {
    std::int64_t oa = 0, ob = 0, rest = i;  // batch offsets from the batch index
    for (std::size_t d = nd - 2; d-- > 0;) {
      std::int64_t at = rest % a.shape[d];
      rest /= a.shape[d];
      oa += at * a.strides[d];
      ob += at * b.strides[d];
    }
    T* out = pc + i * m * n;
    if (k == 0) {
      std::fill(out, out + m * n, T(0));
    } else if constexpr (blas) {
      gemm_in_pieces<T>(la, lb, m, n, k, pa + oa, pb + ob, out);
    } else {
      plain_matmul<T>(m, n, k, pa + oa, a.strides[nd - 2], a.strides[nd - 1], pb + ob, b.strides[nd - 2],
                      b.strides[nd - 1], out);
    }
  }
}

// A copy of t's matrices that cblas can read, each laid out in the order of
// the view's strides (column-major when its rows' stride is the smaller,
// nonzero one): a view and a copy of it then take the same transpose flag,
// and OpenBLAS, whose kernels differ per flag, gives the same bits.
Tensor readable_copy(const Tensor& t) {
  const auto& i = *t.impl();
  const std::size_t nd = i.shape.size();
  const std::int64_t rs = i.strides[nd - 2], cs = i.strides[nd - 1];
  if (rs == 0 || std::abs(rs) >= std::abs(cs)) return contiguous(t);
  auto swapped = [&](const Shape& shape, const Strides& strides) {  // (the last two axes)
    Shape s2 = shape;
    Strides st2 = strides;
    std::swap(s2[nd - 2], s2[nd - 1]);
    std::swap(st2[nd - 2], st2[nd - 1]);
    return std::pair{s2, st2};
  };
  const auto [shape, strides] = swapped(i.shape, i.strides);
  const Tensor columns = contiguous(make_view(t, shape, strides, i.offset));
  const auto [back, back_strides] = swapped(columns.shape(), columns.impl()->strides);
  return make_view(columns, back, back_strides, 0);
}

// Up to this many multiply-adds (m n k), OpenBLAS may run kernels of its own
// per transpose flag (SkylakeX's small-matrix kernels), whose sums differ in
// the last bits: such products read their operands in C order, whatever
// their layout, so the bits do not depend on it.
constexpr double small_product = 1 << 20;

void matmul_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& c) {
  Tensor a = x[0], b = x[1];
  const Shape& shape = c.shape();
  const std::size_t nd = shape.size();
  const bool small = double(shape[nd - 2]) * double(shape[nd - 1]) * double(a.shape()[nd - 1]) <= small_product;
  // cblas needs each matrix to be contiguous along one of its axes.
  auto usable = [&](const Tensor& t) {
    const auto& i = *t.impl();
    const MatrixLayout layout = blas_layout(i.shape[nd - 2], i.shape[nd - 1], i.strides[nd - 2], i.strides[nd - 1]);
    return layout.ok && (!small || layout.trans == CblasNoTrans);
  };
  if (!usable(a)) a = small ? contiguous(a) : readable_copy(a);
  if (!usable(b)) b = small ? contiguous(b) : readable_copy(b);
  visit_dtype(c.dtype(), [&](auto d) {
    using T = element_t<decltype(d)::value>;
    if constexpr (!std::is_same_v<T, bool>) batched<T>(a, b, c);
  });
}

}  // namespace

void register_linalg(RuleTable& table) {
  table.define(Prim::matmul, {.type = &matmul_type, .eager = &eager_into<&matmul_into>, .into = &matmul_into});
}

}  // namespace nx::ops
