#include "ops/nan_hunt.hpp"

#include <cmath>
#include <complex>
#include <vector>

#include "ops/errors.hpp"
#include "rune/nx.hpp"

namespace nx::ops {

std::int64_t first_non_finite(const Tensor& t) {
  if (is_floating(t.dtype())) {
    const std::vector<double> v = nx::to_vector<double>(t);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i])) return std::int64_t(i);
  } else if (is_complex(t.dtype())) {
    const std::vector<std::complex<double>> v = nx::to_vector<std::complex<double>>(t);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i].real()) || !std::isfinite(v[i].imag())) return std::int64_t(i);
  }
  return -1;
}

namespace {

std::string element_text(const Tensor& value, std::int64_t element) {
  if (is_complex(value.dtype())) {
    const std::complex<double> z = nx::to_vector<std::complex<double>>(value)[std::size_t(element)];
    return "(" + std::to_string(z.real()) + ", " + std::to_string(z.imag()) + ")";
  }
  const double x = nx::to_vector<double>(value)[std::size_t(element)];
  return std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
}

}  // namespace

std::int64_t first_made_non_finite(std::span<const Tensor> operands, const Tensor& value) {
  const std::int64_t at = first_non_finite(value);
  if (at < 0) return -1;
  for (const Tensor& t : operands)
    if (first_non_finite(t) >= 0) return -1;  // (carried in, not made here)
  return at;
}

void raise_non_finite(std::string_view what, const Tensor& value, std::int64_t element, rune::detail::CallSite site) {
  const std::string at = site ? " at " + describe(site) : "";
  throw NonFiniteError("rune::debug_nans: " + std::string(what) + at + " made " + element_text(value, element) +
                       " from finite operands (element " + std::to_string(element) + " of its " +
                       std::string(name(value.dtype())) + " " + nx::to_string(value.shape()) + " result)");
}

void raise_non_finite_in_lane(std::string_view what, const Tensor& value, std::int64_t element,
                              rune::detail::CallSite site, std::int64_t first, std::int64_t lanes) {
  internal_assert(lanes > 0 && value.numel() % lanes == 0 && (lanes == 1 || value.shape()[0] == lanes),
                  "the value to hold its lanes along axis 0");
  const std::int64_t per_lane = value.numel() / lanes, k = element / per_lane;
  try {
    raise_non_finite(what, value.shape().empty() ? value : nx::get(value, k), element % per_lane, site);
  } catch (const NonFiniteError& e) {
    rethrow_non_finite(e, "in lane " + std::to_string(first + k) + " of rune::vmap");
  }
}

// (placed where the user called the primitive, else where a replay's
// equation was traced)
void check_made_finite(std::string_view api, std::span<const Tensor> operands, const Tensor& result) {
  if (const std::int64_t at = first_made_non_finite(operands, result); at >= 0)
    raise_non_finite(api, result, at, equation_site());
}

void check_lanes_made_finite(std::string_view api, std::span<const Tensor> operands, const Tensor& result) {
  if (const std::int64_t at = first_made_non_finite(operands, result); at >= 0)
    raise_non_finite_in_lane(api, result, at, equation_site(), 0, result.shape()[0]);
}

void rethrow_non_finite(const NonFiniteError& e, const std::string& where) {
  throw NonFiniteError(std::string(e.what()) + ", " + where);
}

}  // namespace nx::ops
