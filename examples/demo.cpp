// The demo: a short eager session with nx (later issues grow it into a
// differentiable simulation).
#include <rune/rune.hpp>

#include <iostream>

int main() {
  using nx::Tensor;
  Tensor x = nx::linspace(nx::float64, 0., 1., 5);
  Tensor y = nx::tanh(x * 2. + 1.) * x - nx::exp(-x * x);
  std::cout << "x = " << x << "\n";
  std::cout << "tanh(2x + 1) x - exp(-x^2) = " << y << "\n";
  std::cout << "sum = " << nx::sum(y) << ", mean = " << nx::mean(y) << "\n";

  Tensor a = nx::create(nx::float32, {2, 3}, {1., 2., 3., 4., 5., 6.});
  Tensor b = nx::transpose(a);
  std::cout << "a = " << a << "\n";
  std::cout << "a @ a^T = " << nx::matmul(a, b) << "\n";
  std::cout << "row maxima = " << nx::max(a, {1}) << ", argmax = " << nx::argmax(a, 1) << "\n";
}
