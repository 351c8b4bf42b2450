// error: rune::cond: each branch is called with no arguments: capture what it reads
#include "common.hpp"
int main() {
  Tensor x = nx::ones(nx::float64, {2});
  auto y = rune::cond(nx::scalar(nx::bool_, 1), [](const Tensor& v) { return v; }, [&] { return x; });
}
