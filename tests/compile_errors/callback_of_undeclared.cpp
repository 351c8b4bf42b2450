// error: rune::callback: like or an argument is not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() {
  Tensor x = nx::ones(nx::float64, {2});
  Undeclared out = rune::callback([](const Tensor& v) { return Undeclared{v, v}; }, Undeclared{x, x}, x);
}
