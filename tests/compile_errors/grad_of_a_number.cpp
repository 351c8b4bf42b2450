// error: rune::grad: the parameters hold no tensor to differentiate: wrap a number in nx::scalar(nx::float64, x)
#include "common.hpp"
int main() { auto g = rune::grad(objective, 3.0); }
