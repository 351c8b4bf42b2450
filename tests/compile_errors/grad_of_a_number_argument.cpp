// error: rune::value_and_grad: the chosen arguments hold no tensor to differentiate: wrap a number in nx::scalar(nx::float64, x)
#include "common.hpp"
int main() {
  Tensor a = nx::ones(nx::float64, {2});
  auto g = rune::value_and_grad<1>([](const Tensor& x, double s) { return nx::sum(x * s); }, a, 2.0);
}
