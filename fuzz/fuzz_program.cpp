// libFuzzer target: program text. Each input is parsed with
// rune::parse_program; a program that parses is printed and parsed back
// (the two must be equal) and run on zeros, ones and small values of its
// parameter types. std::invalid_argument is the documented user error and
// ends the input quietly; any other exception, a crash or a sanitizer
// report is a finding.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "ir/construct.hpp"
#include "ir/program.hpp"
#include "rune/nx.hpp"
#include "rune/program.hpp"

namespace {

using rune::ir::TensorType;

// Inputs whose values hold more elements than this (or have a larger axis
// or scan) are skipped: running them is slow rather than wrong, and the
// element-count overflows of huge shapes are known (the shape-arithmetic
// fix on the main branch); skipping them keeps the fuzzer on new ground.
constexpr std::int64_t cap = 1'000'000;

std::int64_t capped_product(std::int64_t a, std::int64_t b) {
  std::int64_t p = 0;
  return __builtin_mul_overflow(a, b, &p) || p > cap ? cap + 1 : p;
}

// The elements a run computes, each scan's step counted once per row;
// above `cap` once any value, axis or row count is.
std::int64_t work(const rune::ir::Program& p) {
  std::int64_t total = 0;
  for (const TensorType& t : p.types) {
    std::int64_t elements = 1;
    for (std::int64_t d : t.shape) elements = d > cap ? cap + 1 : capped_product(elements, d);
    total = std::min(total + elements, cap + 1);
  }
  for (const rune::ir::Equation& eq : p.equations)
    for (const auto& sub : eq.programs) {
      // (a loop's count bounds how often its sub-programs run)
      const auto& text = rune::ir::construct_rules(eq.kind).text;
      const std::int64_t rows = text && !text->unit.empty() ? rune::ir::construct_rules(eq.kind).count(eq) : 1;
      total = std::min(total + capped_product(rows, work(*sub)), cap + 1);
    }
  return total;
}

// 0, 1, 2, 0, ... (bool and unsigned); -1.5, -0.5, 0.5, ... (floating and
// complex); -2, -1, 0, 1, 2, ... (signed integers).
nx::Tensor small_values(const TensorType& t) {
  std::vector<double> values(std::size_t(nx::numel(t.shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (t.dtype == nx::bool_ || nx::is_unsigned(t.dtype)) values[i] = double(i % 3);
    else values[i] = double(i % 5) - 2 + (nx::is_inexact(t.dtype) ? 0.5 : 0);
  }
  return nx::create(t.dtype, t.shape, values);
}

void run_on(const rune::Program& program, nx::Tensor (*fill)(const TensorType&)) {
  std::vector<nx::Tensor> args;
  for (int v : program.ir().params) args.push_back(fill(program.ir().types[std::size_t(v)]));
  try {
    rune::run(program, args);
  } catch (const std::invalid_argument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  rune::Program program;
  try {
    program = rune::parse_program(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (rune::parse_program(rune::to_string(program)) != program) {
    std::fprintf(stderr, "the printed program parses back different:\n%s", rune::to_string(program).c_str());
    std::abort();
  }
  if (work(program.ir()) > cap) return 0;
  run_on(program, [](const TensorType& t) { return nx::zeros(t.dtype, t.shape); });
  run_on(program, [](const TensorType& t) { return nx::ones(t.dtype, t.shape); });
  run_on(program, small_values);
  return 0;
}
