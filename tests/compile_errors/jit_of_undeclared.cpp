// error: rune::jit: an argument is not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() {
  auto f = rune::jit([](const Undeclared& u) { return u.a + u.b; });
  auto y = f(Undeclared{});
}
