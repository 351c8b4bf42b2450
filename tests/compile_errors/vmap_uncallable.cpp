// error: rune::vmap: the function cannot be called with these arguments
#include "common.hpp"
int main() { auto y = rune::vmap([](const Tensor& x) { return x; })(3.0); }
