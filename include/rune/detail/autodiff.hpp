// What the differentiation templates (rune/grad.hpp) need from ad/, without
// exposing traces or programs.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "rune/tensor.hpp"

namespace rune::detail {

// Whether a leaf is differentiated: real and complex tensors are, integer
// and bool ones are not (their derivatives are zeros).
bool differentiable(const nx::Tensor& t);

// A linear map from the input tangents of a linearized function to the
// tangents of its outputs, with its residuals; applied backward (transposed)
// by pull_back, any number of times, from any thread.
struct LinearMap;
std::vector<nx::Tensor> pull_back(const LinearMap& map, std::span<const nx::Tensor> output_cotangents,
                                  std::string_view entry_point);

// Runs a function forward over values that carry a derivative, recording
// the linear part (reverse mode: linearize, then transpose).
class Linearization {
 public:
  explicit Linearization(std::string_view entry_point);
  ~Linearization();
  Linearization(const Linearization&) = delete;
  Linearization& operator=(const Linearization&) = delete;

  // The inputs as values that carry a derivative (differentiable leaves).
  std::vector<nx::Tensor> inputs(std::span<const nx::Tensor> primals);
  // Ends the trace; the outputs' primal values. The linear map goes from the
  // inputs' tangents to the tangents of the first `linear_count` outputs.
  std::vector<nx::Tensor> finish(std::span<const nx::Tensor> outputs, std::size_t linear_count);
  std::shared_ptr<const LinearMap> linear_map() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// While one lives (on this thread), nothing computed is differentiated:
// values that carry a derivative give their primal, and what is computed
// from them carries none (rune::root's solve).
class WithoutDerivatives {
 public:
  WithoutDerivatives();
  ~WithoutDerivatives();
  WithoutDerivatives(const WithoutDerivatives&) = delete;
  WithoutDerivatives& operator=(const WithoutDerivatives&) = delete;
};

// The bytes of the values a linear map keeps for its backward pass.
std::size_t residual_bytes(const LinearMap& map);

// Runs a function forward carrying concrete tangents (forward mode).
class Forward {
 public:
  explicit Forward(std::string_view entry_point);
  ~Forward();
  Forward(const Forward&) = delete;
  Forward& operator=(const Forward&) = delete;

  std::vector<nx::Tensor> inputs(std::span<const nx::Tensor> primals, std::span<const nx::Tensor> tangents);
  // Ends the trace: the outputs' primals and tangents (zeros made concrete).
  std::pair<std::vector<nx::Tensor>, std::vector<nx::Tensor>> finish(std::span<const nx::Tensor> outputs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rune::detail
