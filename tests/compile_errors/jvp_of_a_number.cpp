// error: rune::jvp: the parameters hold no tensor to differentiate: wrap a number in nx::scalar(nx::float64, x)
#include "common.hpp"
int main() { auto [y, t] = rune::jvp([](double x) { return nx::scalar(nx::float64, x); }, 1.0, 1.0); }
