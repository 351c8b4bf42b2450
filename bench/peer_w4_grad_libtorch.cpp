// W4, peers: the gradient alone of the MLP loss in libtorch C++ autograd.
//
// The shared peers' cpp/w4_libtorch.cpp times whole training steps only; this
// times the gradient alone of the same raw-tensor model (torch::addmm, tanh,
// MSE; x, t torch::randn with seed 0; W1 / sqrt(784), W2 / sqrt(256), zero
// biases), STEPS calls per sample, in the common line format (bench.hpp).
// Built by bench/run.sh like the peers' libtorch programs:
//   g++ -O2 -std=c++17 -I/usr/include/torch/csrc/api/include peer_w4_grad_libtorch.cpp -ltorch -ltorch_cpu -lc10
#include <torch/torch.h>

#include <cmath>
#include <cstdio>

#include "bench.hpp"

using bench::fmtd;

int main() {
  torch::set_num_threads(2);
  std::printf("# W4 libtorch grad: torch threads=%d\n", torch::get_num_threads());
  torch::manual_seed(0);
  const int64_t B = 128, D = 784, H = 256, O = 10;
  const int STEPS = 50;
  const double FLOP_STEP = 2.0 * B * (D * H + H * O) + 2.0 * (D * H * B + H * O * B + B * O * H);
  auto x = torch::randn({B, D});
  auto t = torch::randn({B, O});
  auto W1 = (torch::randn({D, H}) * (1.0 / std::sqrt(double(D)))).requires_grad_();
  auto b1 = torch::zeros({H}, torch::requires_grad());
  auto W2 = (torch::randn({H, O}) * (1.0 / std::sqrt(double(H)))).requires_grad_();
  auto b2 = torch::zeros({O}, torch::requires_grad());
  std::vector<torch::Tensor> params{W1, b1, W2, b2};
  auto loss_fn = [&] {
    auto h = torch::tanh(torch::addmm(b1, x, W1));
    auto y = torch::addmm(b2, h, W2);
    return (y - t).pow(2).mean();
  };
  auto grad_fn = [&] { return torch::autograd::grad({loss_fn()}, params); };

  {  // check against the backward pass written by hand
    auto g = grad_fn();
    torch::NoGradGuard ng;
    auto h = torch::tanh(torch::addmm(b1, x, W1));
    auto dy = (torch::addmm(b2, h, W2) - t) * (2.0 / double(B * O));
    auto dz = dy.mm(W2.t()) * (1 - h * h);
    std::vector<torch::Tensor> ref{x.t().mm(dz), dz.sum(0), h.t().mm(dy), dy.sum(0)};
    double worst = 0;
    for (size_t i = 0; i < 4; ++i)
      worst = std::max(worst, (g[i] - ref[i]).abs().max().item<double>() / ref[i].abs().max().item<double>());
    std::printf("# W4 libtorch grad check: loss %.7f; largest |autograd - hand-written| / max|g| = %.3g: %s\n",
                loss_fn().item<double>(), worst, worst <= 1e-4 ? "ok" : "WRONG");
  }

  auto s = bench::measure(
      [&] {
        for (int i = 0; i < STEPS; ++i) {
          auto g = grad_fn();
          bench::keep(g);
        }
      },
      11, 2);
  const double per = s.med / STEPS;
  bench::report("W4", "libtorch C++ autograd grad (torch::autograd::grad)", s,
                fmtd("%.3f ms/call, ", per * 1e3) + fmtd("%.1f GFLOP/s (matmul flops)", FLOP_STEP / per / 1e9),
                "torch threads=2; 50 calls per sample; forward + backward, fresh gradients, no update");
  return 0;
}
