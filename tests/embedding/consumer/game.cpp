// A game's use of rune: the gradient of an energy.
#include <iostream>
#include <rune/rune.hpp>

int main() {
  auto energy = [](const nx::Tensor& x) { return nx::sum(x * x); };
  std::cout << rune::grad(energy, nx::create(nx::float64, {2}, {1., 2.})) << "\n";
}
