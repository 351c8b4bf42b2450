// The nx functions the generator calls by table: unary, binary, reductions
// and arg reductions, each with the dtypes it takes (from the primitive
// table where it binds one primitive) and where it is smooth.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <rune/nx.hpp>

namespace gen {

// The result dtype given the operand's.
// (accumulated: sum and prod's, integers widened to 64 bits)
enum class Result : std::uint8_t { same, boolean, real, int32, accumulated };
// Where a gradient case keeps an operand (generator.cpp squashes it there):
// positive (0.5, 2.5), unit (-0.8, 0.8), bounded (-2, 2).
enum class Domain : std::uint8_t { any, positive, unit, bounded };

struct UnaryFunction {
  std::string_view name;
  nx::Tensor (*f)(nx::Operand);
  std::uint8_t accepts;  // nx::ops::DTypeClass bits
  Result result;
  Domain domain;
};

struct BinaryFunction {
  std::string_view name;
  nx::Tensor (*f)(nx::Operand, const nx::Tensor&);
  nx::Tensor (*scalar_first)(double, nx::Operand);
  nx::Tensor (*scalar_second)(nx::Operand, double);
  std::uint8_t accepts;
  Result result;
  Domain first, second;
};

struct ReduceFunction {
  std::string_view name;
  nx::Tensor (*f)(const nx::Tensor&, const nx::Axes&, bool);
  std::uint8_t accepts;
  Result result;
  bool needs_elements;  // no identity: refuses an empty reduced axis
};

struct ArgFunction {
  std::string_view name;
  nx::Tensor (*f)(nx::Operand, std::int64_t);
  std::uint8_t accepts;
};

std::span<const UnaryFunction> unary_functions();
std::span<const BinaryFunction> binary_functions();
std::span<const ReduceFunction> reduce_functions();
std::span<const ArgFunction> arg_functions();

bool accepts(std::uint8_t classes, nx::DType d);
nx::DType result_dtype(Result r, nx::DType d);

}  // namespace gen
