// solve and cholesky through LAPACK (OpenBLAS carries it), per matrix of the
// batch. float16 and bfloat16 compute in float32. A singular matrix (solve)
// or one that is not positive definite (cholesky) gives NaN: under tracing
// there is no one to tell, and NaN shows where it came from.
#include <complex>
#include <limits>

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

// Runs body(batch index, matrix pointers) over column-major copies, with
// row-major in and out (a transpose copy each way).
template <class T> void to_columns(const T* rows, T* cols, std::int64_t r, std::int64_t c) {
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) cols[j * r + i] = rows[i * c + j];
}
template <class T> void to_rows(const T* cols, T* rows, std::int64_t r, std::int64_t c) {
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) rows[i * c + j] = cols[j * r + i];
}

template <class T> Tensor solve_as(const Tensor& A, const Tensor& B) {
  const Shape& s = B.shape();
  const std::int64_t n = s[s.size() - 2], k = s[s.size() - 1];
  const std::int64_t batches = n * k == 0 ? 0 : B.numel() / (n * k);
  Tensor a = contiguous(A), b = contiguous(B), x = make_tensor(B.dtype(), s);
  std::vector<T> ca(std::size_t(n * n)), cb(std::size_t(n * k));
  std::vector<int> pivots(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < batches; ++i) {
    to_columns(data_of<T>(a) + i * n * n, ca.data(), n, n);
    to_columns(data_of<T>(b) + i * n * k, cb.data(), n, k);
    int info = 0;
    gesv(int(n), int(k), ca.data(), pivots.data(), cb.data(), &info);
    if (info != 0) std::fill(cb.begin(), cb.end(), not_a_number<T>());
    to_rows(cb.data(), data_of<T>(x) + i * n * k, n, k);
  }
  return x;
}

template <class T> Tensor cholesky_as(const Tensor& A) {
  const Shape& s = A.shape();
  const std::int64_t n = s[s.size() - 1];
  const std::int64_t batches = n == 0 ? 0 : A.numel() / (n * n);
  Tensor l = make_tensor(A.dtype(), s);
  copy_elements(*A.impl(), *l.impl());
  for (std::int64_t i = 0; i < batches; ++i) {
    // Row-major A read column-major is A^T = conj(A): LAPACK's upper U with
    // conj(A) = U^H U, read back row-major, is U^T, and A = U^T (U^T)^H.
    T* m = data_of<T>(l) + i * n * n;
    int info = 0;
    potrf(int(n), m, &info);
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < n; ++c) {
        T& e = m[r * n + c];
        if (info != 0) e = not_a_number<T>();
        else if (c > r) e = T(0);
      }
  }
  return l;
}

// Calls f<T>(...) for the LAPACK type of the (possibly converted) operands.
template <class F> Tensor with_lapack_type(DType d, F f) {
  switch (lapack_dtype(d)) {
    case float32: return f(float{});
    case float64: return f(double{});
    case complex64: return f(std::complex<float>{});
    default: return f(std::complex<double>{});
  }
}

Tensor solve_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType& type) {
  const DType d = lapack_dtype(type.dtype);
  Tensor a = convert_elements(x[0], d), b = convert_elements(x[1], d);
  Tensor out = with_lapack_type(d, [&](auto t) { return solve_as<decltype(t)>(a, b); });
  return convert_elements(out, type.dtype);
}

Tensor cholesky_eager(Prim, std::span<const Tensor> x, const Params&, const TensorType& type) {
  const DType d = lapack_dtype(type.dtype);
  Tensor a = convert_elements(x[0], d);
  Tensor out = with_lapack_type(d, [&](auto t) { return cholesky_as<decltype(t)>(a); });
  return convert_elements(out, type.dtype);
}

}  // namespace

void register_decompositions(Rules* table) {
  table[int(Prim::solve)] = {&solve_type, &solve_eager};
  table[int(Prim::cholesky)] = {&cholesky_type, &cholesky_eager};
}

}  // namespace nx::ops
