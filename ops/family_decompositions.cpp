// solve and cholesky through LAPACK (OpenBLAS carries it), per matrix of the
// batch. float16 and bfloat16 compute in float32. A singular matrix (solve)
// or one that is not positive definite (cholesky) gives NaN: under tracing
// there is no one to tell, and NaN shows where it came from.
#include <algorithm>
#include <complex>
#include <limits>
#include <span>

#include <boost/container/small_vector.hpp>

#include "ops/concrete.hpp"
#include "ops/type_checks.hpp"

extern "C" {
void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b, const int* ldb, int* info);
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
void cgesv_(const int* n, const int* nrhs, std::complex<float>* a, const int* lda, int* ipiv, std::complex<float>* b,
            const int* ldb, int* info);
void zgesv_(const int* n, const int* nrhs, std::complex<double>* a, const int* lda, int* ipiv,
            std::complex<double>* b, const int* ldb, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info);
}

namespace nx::ops {
namespace {

void gesv(int n, int k, float* a, int* p, float* b, int* info) { sgesv_(&n, &k, a, &n, p, b, &n, info); }
void gesv(int n, int k, double* a, int* p, double* b, int* info) { dgesv_(&n, &k, a, &n, p, b, &n, info); }
void gesv(int n, int k, std::complex<float>* a, int* p, std::complex<float>* b, int* info) {
  cgesv_(&n, &k, a, &n, p, b, &n, info);
}
void gesv(int n, int k, std::complex<double>* a, int* p, std::complex<double>* b, int* info) {
  zgesv_(&n, &k, a, &n, p, b, &n, info);
}
void potrf(int n, float* a, int* info) { spotrf_("U", &n, a, &n, info); }
void potrf(int n, double* a, int* info) { dpotrf_("U", &n, a, &n, info); }
void potrf(int n, std::complex<float>* a, int* info) { cpotrf_("U", &n, a, &n, info); }
void potrf(int n, std::complex<double>* a, int* info) { zpotrf_("U", &n, a, &n, info); }

template <class T> T not_a_number() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else return T(std::numeric_limits<typename T::value_type>::quiet_NaN());
}

bool square(const Shape& s) { return s.size() >= 2 && s[s.size() - 1] == s[s.size() - 2]; }

TensorType solve_type(Prim p, std::span<const Tensor> x, const Params&) {
  check_same_dtype(p, x);
  check_accepts(p, x[0]);
  const Shape &a = x[0].shape(), &b = x[1].shape();
  if (!square(a) || b.size() != a.size() || !std::equal(a.begin(), a.end() - 2, b.begin()) ||
      b[b.size() - 2] != a[a.size() - 1])
    fail(info(p).api, "shapes " + to_string(a) + " and " + to_string(b) + " do not fit a linear system");
  return type_of(x[1]);
}

TensorType cholesky_type(Prim p, std::span<const Tensor> x, const Params&) {
  check_accepts(p, x[0]);
  if (!square(x[0].shape())) fail(info(p).api, describe(x[0]) + " is not a batch of square matrices");
  return type_of(x[0]);
}

// The compute dtype: 16-bit floats go through float32.
DType lapack_dtype(DType d) { return d == float16 || d == bfloat16 ? float32 : d; }

// LAPACK reads and writes column-major matrices: a transpose copy each way.
template <class T> void to_columns(const T* rows, T* cols, std::int64_t r, std::int64_t c) {
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) cols[j * r + i] = rows[i * c + j];
}
template <class T> void to_rows(const T* cols, T* rows, std::int64_t r, std::int64_t c) {
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) rows[i * c + j] = cols[j * r + i];
}

// x = A^-1 B per matrix, into x (C order, of T's dtype).
template <class T> void solve_as(const Tensor& A, const Tensor& B, const Tensor& x) {
  const Shape& s = B.shape();
  const std::int64_t n = s[s.size() - 2], k = s[s.size() - 1];
  const std::int64_t batches = n * k == 0 ? 0 : B.numel() / (n * k);
  Tensor a = contiguous(A), b = contiguous(B);
  // (LAPACK's column-major copies and pivots in pooled buffers: a frame
  // loop calling solve allocates nothing)
  const Tensor column_a = make_tensor(x.dtype(), {n * n}), column_b = make_tensor(x.dtype(), {n * k});
  const Tensor pivot_buffer = make_tensor(int32, {n});
  T *ca = data_of<T>(column_a), *cb = data_of<T>(column_b);
  static_assert(sizeof(int) == sizeof(std::int32_t));
  int* pivots = data_of<int>(pivot_buffer);
  for (std::int64_t i = 0; i < batches; ++i) {
    to_columns(data_of<T>(a) + i * n * n, ca, n, n);
    to_columns(data_of<T>(b) + i * n * k, cb, n, k);
    int info = 0;
    gesv(int(n), int(k), ca, pivots, cb, &info);
    if (info != 0) std::fill(cb, cb + n * k, not_a_number<T>());
    to_rows(cb, data_of<T>(x) + i * n * k, n, k);
  }
}

template <class T> T conjugate(T x) {
  if constexpr (std::is_floating_point_v<T>) return x;
  else return std::conj(x);
}

// Puts the Hermitian part (M + M^H) / 2 of an n by n matrix (C order) in its
// lower triangle, the one LAPACK reads. So cholesky factors the Hermitian
// part of any matrix (as JAX's cholesky does): a function of every element,
// whose derivative is that of the symmetric convention (dA taken as
// (dA + dA^H) / 2, ops/derivatives_linalg.cpp). A Hermitian matrix keeps
// its bits.
template <class T> void hermitian_part_in_lower(T* m, std::int64_t n) {
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < r; ++c) {
      T& below = m[r * n + c];
      const T above = conjugate(m[c * n + r]);
      if (below != above) below = below * T(0.5) + above * T(0.5);  // (cannot overflow)
    }
}

// The lower factor L of the Hermitian part of A = L L^H per matrix, into l
// (C order, of T's dtype).
template <class T> void cholesky_as(const Tensor& A, const Tensor& l) {
  const Shape& s = A.shape();
  const std::int64_t n = s[s.size() - 1];
  const std::int64_t batches = n == 0 ? 0 : A.numel() / (n * n);
  copy_elements(*A.impl(), *l.impl());
  for (std::int64_t i = 0; i < batches; ++i) {
    // Row-major A read column-major is A^T = conj(A): LAPACK's upper U with
    // conj(A) = U^H U, read back row-major, is U^T, and A = U^T (U^T)^H.
    T* m = data_of<T>(l) + i * n * n;
    hermitian_part_in_lower(m, n);
    int info = 0;
    potrf(int(n), m, &info);
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < n; ++c) {
        T& e = m[r * n + c];
        if (info != 0) e = not_a_number<T>();
        else if (c > r) e = T(0);
      }
  }
}

// Runs compute<T>(operands converted to T's dtype, result) for the LAPACK
// type T of out's dtype, into out: straight into it, or (16-bit floats)
// into a float32 tensor then converted.
template <class F> void into_lapack_type(std::span<const Tensor> x, const Tensor& out, F compute) {
  const DType d = lapack_dtype(out.dtype());
  boost::container::small_vector<Tensor, 2> operands;
  for (const Tensor& t : x) operands.push_back(convert_elements(t, d));
  const Tensor result = d == out.dtype() ? out : make_tensor(d, out.shape());
  auto run = [&](auto t) { compute(t, std::span<const Tensor>(operands.data(), operands.size()), result); };
  switch (d) {
    case float32: run(float{}); break;
    case float64: run(double{}); break;
    case complex64: run(std::complex<float>{}); break;
    default: run(std::complex<double>{}); break;
  }
  if (d != out.dtype()) copy_elements(*convert_elements(result, out.dtype()).impl(), *out.impl());
}

void solve_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& out) {
  into_lapack_type(x, out, [](auto t, std::span<const Tensor> a, const Tensor& r) {
    solve_as<decltype(t)>(a[0], a[1], r);
  });
}

void cholesky_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& out) {
  into_lapack_type(x, out, [](auto t, std::span<const Tensor> a, const Tensor& r) { cholesky_as<decltype(t)>(a[0], r); });
}

}  // namespace

void register_decompositions(RuleTable& table) {
  table.define(Prim::solve, {.type = &solve_type, .eager = &eager_into<&solve_into>, .into = &solve_into});
  table.define(Prim::cholesky, {.type = &cholesky_type, .eager = &eager_into<&cholesky_into>, .into = &cholesky_into});
}

}  // namespace nx::ops
