// Misuse of an entry point caught where it is called: each entry point is
// constrained by what it needs (structures, a function it can call), and
// beside it an unconstrained twin that only fails, so the first error of a
// misuse is one static assertion naming the entry point, what is wrong and
// the fix ("wrap a number in nx::scalar", "declare the struct with
// RUNE_TREE") rather than a failure deep inside a walk.
#pragma once

#include <concepts>
#include <tuple>
#include <type_traits>

#include "rune/tree.hpp"

namespace rune::detail {

// Whether a value of type T can hold a tensor leaf (a structure of static
// leaves alone cannot).
template <class T> constexpr bool may_hold_tensor() {
  using namespace tree_detail;
  using U = std::remove_cvref_t<T>;
  if constexpr (Tensor<U>) return true;
  else if constexpr (HasChildren<U>) return any_child<U>([](auto c) { return may_hold_tensor<typename decltype(c)::type>(); });
  else return false;
}

// What a misused entry point returns after its error: a value that converts
// to anything, so that the caller's use of it adds no error before it.
struct Misuse {
  template <class T> operator T() const { return T{}; }
};

template <class... T> concept Structures = (is_tree<T> && ...);
// Parameters to differentiate: a structure with room for a tensor.
template <class P> concept Differentiable = is_tree<P> && (may_hold_tensor<P>());

}  // namespace rune::detail

// The fix for a type that is not a structure.
#define RUNE_DETAIL_STRUCTURE_FIX                                                                                  \
  "declare the struct with RUNE_TREE(Type, field, ...); structures are tensors, numbers, and pairs, tuples, "     \
  "arrays, vectors, optionals, string-keyed maps and RUNE_TREE structs of structures"

// The fix for a function of several arguments given to grad, value_and_grad.
#define RUNE_DETAIL_ARGNUMS_FIX                                                                                  \
  "rune::grad<0, 1>(f, a, b) differentiates f(a, b) with respect to a and b (rune::grad<1>(f, a, b): b alone), " \
  "or pass one structure: rune::grad(f, std::tuple{a, b}) with f taking the tuple"

// What a function that cannot be called with the values given may need.
#define RUNE_DETAIL_CALL_HINT                                                                                    \
  " (each as a const reference; a number stays a number: nx::scalar(nx::float64, x) makes it a tensor)"

// The first error of a misused entry point `entry` (a string literal):
// the values of types `...` must be structures (else `not_structure`, a
// string literal naming them: "an argument is"), and `callable`, a
// parenthesized bool expression, must hold (else `not_callable`).
#define RUNE_DETAIL_DIAGNOSE_CALL(entry, not_structure, callable, not_callable, ...)                              \
  if constexpr (!::rune::detail::Structures<__VA_ARGS__>)                                                        \
    static_assert(::rune::detail::Structures<__VA_ARGS__>, entry ": " not_structure " not a structure: "          \
                  RUNE_DETAIL_STRUCTURE_FIX);                                                                    \
  else                                                                                                           \
    static_assert(callable, entry ": " not_callable RUNE_DETAIL_CALL_HINT)

// The same for parameters to differentiate (of type P), which must also
// have room for a tensor.
#define RUNE_DETAIL_DIAGNOSE_PARAMETERS(entry, callable, P)                                                      \
  if constexpr (!::rune::is_tree<P>)                                                                             \
    static_assert(::rune::is_tree<P>, entry ": the parameters are not a structure: " RUNE_DETAIL_STRUCTURE_FIX);  \
  else if constexpr (!::rune::detail::may_hold_tensor<P>())                                                      \
    static_assert(::rune::detail::may_hold_tensor<P>(),                                                          \
                  entry ": the parameters hold no tensor to differentiate: wrap a number in nx::scalar(nx::float64, x)"); \
  else                                                                                                           \
    static_assert(callable, entry ": the function cannot be called with the parameters (as a const reference)")
