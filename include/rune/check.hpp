// nx::check: run-time checks that compiled code computes with the program.
#pragma once

#include <exception>
#include <utility>

#include "rune/detail/effects.hpp"
#include "rune/tree.hpp"

namespace nx {

// cond: a bool tensor or a structure of them; data: a structure handed back.
// make(index, data at index) -> std::exception_ptr builds the exception for
// the first false element (C order); a data tensor shaped like that
// condition is given at the index (a scalar), others whole.
template <class Cond, class Data, class Make>
void check(const Cond& cond, const Data& data, Make make) {
  rune::detail::bind_check(rune::leaves(cond), rune::leaves(data),
                           [make, like = data](const Index& index, std::span<const Tensor> at) {
                             return make(index, rune::rebuild(like, at));
                           });
}

}  // namespace nx
