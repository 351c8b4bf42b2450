// error: rune::jit: the function cannot be called with these arguments (each as a const reference; a number stays a number: nx::scalar(nx::float64, x) makes it a tensor)
#include "common.hpp"
int main() {
  auto f = rune::jit([](const Tensor& x) { return x * 2.; });
  auto y = f(2.0);
}
