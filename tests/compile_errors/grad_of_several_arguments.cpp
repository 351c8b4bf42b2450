// error: rune::grad: several arguments: rune::grad<0, 1>(f, a, b) differentiates f(a, b) with respect to a and b
#include "common.hpp"
int main() {
  Tensor a = nx::ones(nx::float64, {2}), b = nx::ones(nx::float64, {2});
  auto g = rune::grad([](const Tensor& x, const Tensor& y) { return nx::sum(x * y); }, a, b);
}
