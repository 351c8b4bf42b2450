// error: rune::scan: the step must return a pair of the new carry and the row's output: return std::pair{carry, y}
#include "common.hpp"
int main() {
  auto [total, partial] = rune::scan([](const Tensor& c, const Tensor& x) { return c + x; }, nx::zeros(nx::float64, {}),
                                     nx::ones(nx::float64, {3}));
}
