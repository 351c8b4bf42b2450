// error: rune::program: an argument is not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() { rune::Program p = rune::program([](const Undeclared& u) { return u.a; }, Undeclared{}); }
