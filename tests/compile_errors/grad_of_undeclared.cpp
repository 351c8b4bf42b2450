// error: rune::grad: the parameters are not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() { auto g = rune::grad([](const Undeclared& u) { return nx::sum(u.a); }, Undeclared{}); }
