// nx::check (run-time checks that compiled code computes with the program)
// and nx::donate (giving a value's storage to the next compiled call).
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

// A handle to t's storage that a compiled call takes: afterwards reading t
// (or any view of its storage) throws. Outside a compiled call it is t.
Tensor donate(const Tensor& t);

}  // namespace nx
