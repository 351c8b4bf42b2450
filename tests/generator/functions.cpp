#include "functions.hpp"

#include <string>
#include <vector>

#include "ops/primitive.hpp"

namespace gen {

namespace {

using nx::ops::DTypeClass;

// The primitive that the nx function `name` binds, if it binds one.
const nx::ops::PrimInfo* primitive_of(std::string_view name) {
  for (const nx::ops::PrimInfo& info : nx::ops::prim_infos)
    if (info.api == "nx::" + std::string(name)) return &info;
  return nullptr;
}

Result result_of(const nx::ops::PrimInfo& info) {
  switch (info.result) {
    case nx::ops::ResultDType::Bool: return Result::boolean;
    case nx::ops::ResultDType::Real: return Result::real;
    case nx::ops::ResultDType::Int32: return Result::int32;
    default: return Result::same;
  }
}

// The dtypes of the composites: those of the primitives they are written with.
std::uint8_t composite_accepts(std::string_view name) {
  if (name == "sigmoid" || name == "mean" || name == "logsumexp") return DTypeClass::F | DTypeClass::C;
  return DTypeClass::S | DTypeClass::U | DTypeClass::F | DTypeClass::C;  // recip, square
}

Domain unary_domain(std::string_view n) {
  if (n == "log" || n == "log2" || n == "log1p" || n == "sqrt" || n == "rsqrt" || n == "recip") return Domain::positive;
  if (n == "asin" || n == "acos" || n == "tan") return Domain::unit;
  if (n == "exp" || n == "exp2" || n == "expm1" || n == "sinh" || n == "cosh") return Domain::bounded;
  return Domain::any;
}

// sum and prod of integers (and bools) accumulate in 64 bits, as NumPy's.
bool accumulates(std::string_view name) { return name == "sum" || name == "prod"; }

struct Entry {
  std::string_view name;
  std::uint8_t accepts;
  Result result;
};
Entry describe(std::string_view name) {
  if (const auto* info = primitive_of(name)) return {name, info->accepts, result_of(*info)};
  return {name, composite_accepts(name), Result::same};
}

std::vector<UnaryFunction> make_unary() {
  std::vector<UnaryFunction> out;
#define GEN_UNARY(f)                                                               \
  {                                                                               \
    Entry e = describe(#f);                                                       \
    out.push_back({e.name, static_cast<nx::Tensor (*)(nx::Operand)>(&nx::f), \
                   e.accepts, e.result, unary_domain(#f)});                       \
  }
  NX_UNARY_FUNCTIONS(GEN_UNARY)
#undef GEN_UNARY
  return out;
}

std::vector<BinaryFunction> make_binary() {
  std::vector<BinaryFunction> out;
  auto domains = [](std::string_view n) -> std::pair<Domain, Domain> {
    if (n == "div" || n == "mod" || n == "atan2") return {Domain::any, Domain::positive};  // (atan2: not at 0, 0)
    if (n == "pow") return {Domain::positive, Domain::bounded};
    return {Domain::any, Domain::any};
  };
#define GEN_BINARY(f)                                                                       \
  {                                                                                        \
    Entry e = describe(#f);                                                                \
    auto [first, second] = domains(#f);                                                    \
    out.push_back({e.name, static_cast<nx::Tensor (*)(nx::Operand, const nx::Tensor&)>(&nx::f), \
                   static_cast<nx::Tensor (*)(double, nx::Operand)>(&nx::f),          \
                   static_cast<nx::Tensor (*)(nx::Operand, double)>(&nx::f), e.accepts, e.result, \
                   first, second});                                                        \
  }
  NX_BINARY_FUNCTIONS(GEN_BINARY)
#undef GEN_BINARY
  return out;
}

std::vector<ReduceFunction> make_reduce() {
  std::vector<ReduceFunction> out;
#define GEN_REDUCE(f, needs_elements)                                                                 \
  {                                                                                                  \
    Entry e = describe(#f);                                                                          \
    auto call = [](const nx::Tensor& t, const nx::Axes& axes, bool keepdims) { return nx::f(t, axes, keepdims); }; \
    out.push_back({e.name, call, e.accepts, accumulates(#f) ? Result::accumulated : e.result, needs_elements}); \
  }
  GEN_REDUCE(sum, false) GEN_REDUCE(prod, false) GEN_REDUCE(max, true) GEN_REDUCE(min, true)
  GEN_REDUCE(all, false) GEN_REDUCE(any, false) GEN_REDUCE(mean, false) GEN_REDUCE(logsumexp, true)
#undef GEN_REDUCE
  return out;
}

}  // namespace

std::span<const UnaryFunction> unary_functions() {
  static const std::vector<UnaryFunction> table = make_unary();
  return table;
}

std::span<const BinaryFunction> binary_functions() {
  static const std::vector<BinaryFunction> table = make_binary();
  return table;
}

std::span<const ReduceFunction> reduce_functions() {
  static const std::vector<ReduceFunction> table = make_reduce();
  return table;
}

std::span<const ArgFunction> arg_functions() {
  static const std::vector<ArgFunction> table = {
      {"argmax", &nx::argmax, describe("argmax").accepts},
      {"argmin", &nx::argmin, describe("argmin").accepts},
  };
  return table;
}

bool accepts(std::uint8_t classes, nx::DType d) { return (classes & nx::ops::dtype_class(d)) != 0; }

nx::DType result_dtype(Result r, nx::DType d) {
  switch (r) {
    case Result::boolean: return nx::bool_;
    case Result::int32: return nx::int32;
    case Result::real: return d == nx::complex64 ? nx::float32 : d == nx::complex128 ? nx::float64 : d;
    case Result::accumulated:
      return d == nx::bool_ || d == nx::int8 || d == nx::int16 || d == nx::int32 ? nx::int64
             : nx::is_unsigned(d)                                               ? nx::uint64
                                                                                : d;
    default: return d;
  }
}

}  // namespace gen
