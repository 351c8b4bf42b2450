// error: rune::iterate: the carry is not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() {
  Undeclared end = rune::iterate(
      5, [](const Undeclared& u) { return nx::all(nx::greater(u.a, 1.)); }, [](const Undeclared& u) { return u; },
      Undeclared{});
}
