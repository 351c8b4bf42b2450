// error: rune::grad: an argument index is past the last argument
#include "common.hpp"
int main() {
  Tensor a = nx::ones(nx::float64, {2}), b = nx::ones(nx::float64, {2});
  auto g = rune::grad<2>([](const Tensor& x, const Tensor& y) { return nx::sum(x * y); }, a, b);
}
