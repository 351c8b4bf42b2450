// error: rune::scan: the step cannot be called with the carry and a row of xs (each as a const reference; a number stays a number
#include "common.hpp"
int main() {
  auto [total, partial] = rune::scan([](const Tensor& c, const Tensor& x) { return std::pair{c + x, c}; }, 0.0,
                                     nx::ones(nx::float64, {3}));
}
