// What the templates of rune (program, scan, ...) need from the staging trace,
// without exposing the program representation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "rune/tensor.hpp"

namespace rune {
namespace ir {
struct Program;
}

namespace detail {

// Traces a function: while it lives, the primitives applied to its
// parameters (and to every value made meanwhile) are recorded as a program.
class Staging {
 public:
  explicit Staging(std::string_view entry_point);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // Stand-ins with the types of `like`, new parameters of the program.
  std::vector<nx::Tensor> parameters(std::span<const nx::Tensor> like);
  // Stand-ins of the types of `like` with their leading axis removed (a
  // row), new parameters of the program.
  std::vector<nx::Tensor> row_parameters(std::span<const nx::Tensor> like);
  // Ends the trace; the program computes `results`.
  std::shared_ptr<const ir::Program> finish(std::span<const nx::Tensor> results);
  // Values of enclosing traces the program reads, in parameter order (after
  // the others); valid after finish.
  const std::vector<nx::Tensor>& captures() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether values are traced, or a trace is active: then the templates that
// run C++ directly when nothing traces (custom rules, remat, collect) trace
// it into a program instead.
bool tracing(std::span<const nx::Tensor> values);

// Applies a scan of `step` (see ir/program.hpp for its inputs and outputs).
std::vector<nx::Tensor> bind_scan(std::shared_ptr<const ir::Program> step, std::int64_t length, int carry_count,
                                  int xs_count, std::span<const nx::Tensor> inputs);

}  // namespace detail
}  // namespace rune
