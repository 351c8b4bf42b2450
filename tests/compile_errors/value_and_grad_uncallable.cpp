// error: rune::value_and_grad: the function cannot be called with the parameters
#include "common.hpp"
int main() { auto [v, g] = rune::value_and_grad([](const Tensor& x, const Tensor& y) { return nx::sum(x * y); }, nx::ones(nx::float64, {2})); }
