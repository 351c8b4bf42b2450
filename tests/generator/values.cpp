#include "values.hpp"

#include <bit>
#include <complex>
#include <limits>

namespace gen {

namespace {

double special(Rng& rng) {
  static const std::vector<double> edges = {
      0.0, -0.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
      1e300, -1e300, 5e-324, -1e-310, 65504., 1e10, 2.5, -0.5};
  if (rng.chance(0.3)) {  // a NaN with a random sign and payload
    const std::uint64_t payload = rng.next() & 0x800fffffffffffffull;
    return std::bit_cast<double>(payload | 0x7ff8000000000000ull);
  }
  return rng.pick(edges);
}

std::int64_t signed_value(Rng& rng, std::int64_t lo, std::int64_t hi) {
  if (rng.chance(0.85)) return rng.uniform(-6, 6);
  return rng.pick(std::vector<std::int64_t>{lo, hi, lo + 1, hi - 1, -1});
}

std::uint64_t unsigned_value(Rng& rng, std::uint64_t hi) {
  if (rng.chance(0.85)) return std::uint64_t(rng.uniform(0, 12));
  return rng.pick(std::vector<std::uint64_t>{hi, hi - 1, 0});
}

template <class T> nx::Tensor integers(Rng& rng, nx::DType dtype, const nx::Shape& shape) {
  using L = std::numeric_limits<T>;
  const auto n = std::size_t(nx::numel(shape));
  if constexpr (std::is_signed_v<T>) {
    std::vector<std::int64_t> v(n);
    for (auto& e : v) e = signed_value(rng, L::min(), L::max());
    return nx::create(dtype, shape, v);
  } else {
    std::vector<std::uint64_t> v(n);
    for (auto& e : v) e = unsigned_value(rng, L::max());
    return nx::create(dtype, shape, v);
  }
}

nx::Tensor reals(Rng& rng, const Type& type, bool smooth) {
  std::vector<double> v(std::size_t(nx::numel(type.shape)));
  for (double& e : v) e = random_scalar(rng, smooth);
  return nx::create(type.dtype, type.shape, v);
}

nx::Tensor complexes(Rng& rng, const Type& type) {
  std::vector<std::complex<double>> v(std::size_t(nx::numel(type.shape)));
  for (auto& e : v) e = {random_scalar(rng, false), random_scalar(rng, false)};
  return nx::create(type.dtype, type.shape, v);
}

}  // namespace

double random_scalar(Rng& rng, bool smooth) {
  if (smooth) return rng.real(-2, 2);
  const double r = rng.real(0, 1);
  if (r < 0.12) return special(rng);
  if (r < 0.45) return double(rng.uniform(-16, 16)) / 4;  // ties, halves, integers
  return rng.real(-4, 4);
}

nx::Tensor random_tensor(Rng& rng, const Type& type, bool smooth) {
  if (type.dtype == nx::bool_) {
    std::vector<bool> v(std::size_t(nx::numel(type.shape)));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = rng.chance(0.5);
    return nx::create(nx::bool_, type.shape, v);
  }
  if (nx::is_complex(type.dtype)) return complexes(rng, type);
  if (nx::is_floating(type.dtype)) return reals(rng, type, smooth);
  return nx::visit_dtype(type.dtype, [&](auto d) -> nx::Tensor {
    using T = nx::element_t<decltype(d)::value>;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return integers<T>(rng, type.dtype, type.shape);
    else return {};
  });
}

nx::Tensor random_indices(Rng& rng, nx::DType dtype, const nx::Shape& shape, std::int64_t n) {
  std::vector<std::int64_t> v(std::size_t(nx::numel(shape)));
  for (auto& e : v) e = rng.chance(0.9) ? rng.uniform(-n, std::max<std::int64_t>(n - 1, 0)) : rng.uniform(-n - 3, n + 3);
  return nx::create(dtype, shape, v);
}

}  // namespace gen
