// error: rune::scan: the carry is not a structure: declare the struct with RUNE_TREE(Type, field, ...)
#include "common.hpp"
int main() { auto [last, all] = rune::scan([](const Undeclared& u) { return std::pair{u, u.a}; }, Undeclared{}, 10); }
