// error: rune::vjp: the parameters are not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() { auto [y, pullback] = rune::vjp([](const Undeclared& u) { return u.a; }, Undeclared{}); }
