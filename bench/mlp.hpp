// The 2-layer MLP of W4 (bench/w4_mlp.cpp) and of W9's data-parallel
// training (bench/w9_ranks.cpp), as the peers define it:
//   h = tanh(x @ W1 + b1),  y = h @ W2 + b2,  loss = mean((y - t)^2)
//   x [128,784], t [128,10] standard normal, W1 [784,256] * 1/sqrt(784),
//   W2 [256,10] * 1/sqrt(256), b1, b2 zeros; SGD with lr 0.01.
#pragma once

#include <rune/rune.hpp>

#include <cmath>
#include <random>
#include <span>
#include <vector>

namespace mlp {

using nx::Tensor;

struct MLP {
  Tensor W1, b1, W2, b2;
};
RUNE_TREE(MLP, W1, b1, W2, b2);

inline const std::int64_t B = 128, D = 784, H = 256, O = 10;
inline const double LR = 0.01;

inline Tensor randn(std::mt19937& rng, const nx::Shape& shape, double scale) {
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> v(std::size_t(nx::numel(shape)));
  for (float& e : v) e = float(nd(rng) * scale);
  return nx::create(nx::float32, shape, std::span<const float>(v));
}

// The parameters' starting values, drawn after x and t from the same generator.
inline MLP initial(std::mt19937& rng) {
  return MLP{randn(rng, {D, H}, 1.0 / std::sqrt(double(D))), nx::zeros(nx::float32, {H}),
             randn(rng, {H, O}, 1.0 / std::sqrt(double(H))), nx::zeros(nx::float32, {O})};
}

inline Tensor loss(const MLP& p, const Tensor& x, const Tensor& t) {
  Tensor h = nx::tanh(nx::matmul(x, p.W1) + p.b1);
  Tensor y = nx::matmul(h, p.W2) + p.b2;
  Tensor r = y - t;
  return nx::mean(r * r);
}

inline MLP sgd(const MLP& p, const MLP& g) {
  return MLP{p.W1 - g.W1 * LR, p.b1 - g.b1 * LR, p.W2 - g.W2 * LR, p.b2 - g.b2 * LR};
}

}  // namespace mlp
