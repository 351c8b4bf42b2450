// rune::load: a saved program as a typed callable, taking and returning the
// caller's structures.
//
//   auto step = rune::jit(physics_step);
//   rune::save_program(step.program(state, dt), "step.rune");   // at build time
//   auto loaded = rune::load<State(State, nx::Tensor)>("step.rune"); // at run time
//   state = loaded(state, dt);
//   loaded.into(out, state, dt);   // results written into caller memory
//
// The saved text's header names each parameter and result by its path in
// the traced structures; load checks the declared types' paths against it
// and names the first difference. A text without a header (older, or from
// rune::program) loads too, checked by its count of values alone.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "rune/program.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace detail {

// Whether T's leaves are all tensors (no static leaf: those were fixed when
// the program was traced) and, with Fixed, fixed in number by the type
// alone (tensors in pairs, tuples, arrays and RUNE_TREE structs; no vector,
// optional or map).
template <class T, bool Fixed> constexpr bool tensor_leaves() {
  using namespace tree_detail;
  if constexpr (Tensor<T>) return true;
  else if constexpr (Fixed && (is_optional<T> || is_vector<T> || is_map<T>)) return false;
  else if constexpr (!Static<T> && HasChildren<T>)
    return all_children<T>([](auto c) { return tensor_leaves<typename decltype(c)::type, Fixed>(); });
  else return false;
}

template <class T> std::vector<std::string> leaf_paths(const T& x) {
  std::vector<std::string> paths;
  for_each_leaf(x, [&](const std::string& path, const nx::Tensor&) { paths.push_back(path); });
  return paths;
}

// Throws rune::load's error where the declared leaves (their paths) are not
// the program's parameters (or results), in number or, for a program with
// names, in path: "rune::load: argument 1 is 0.velocity in the declared
// type, 0.vel in the saved program".
void check_leaf_paths(const Program& program, bool results, std::span<const std::string> declared);
// rune::run and rune::run_into with `api` first in their errors.
std::vector<nx::Tensor> run(std::string_view api, const Program& program, std::span<const nx::Tensor> args);
void run_into(std::string_view api, const Program& program, std::span<const nx::Tensor> args,
              std::span<const nx::Tensor> results);

}  // namespace detail

template <class Signature> class Loaded;

template <class R, class... Args> class Loaded<R(Args...)> {
  static_assert(detail::tensor_leaves<R, true>(),
                "rune::load<R(Args...)>: R must be tensors in pairs, tuples, arrays and RUNE_TREE structs (a "
                "structure whose leaves its type fixes)");
  static_assert((detail::tensor_leaves<Args, false>() && ...),
                "rune::load<R(Args...)>: the arguments' leaves must be tensors (a saved program's static leaves were "
                "fixed when it was traced)");

  // The arguments' leaves are checked against the program's parameters at
  // load when their types fix them, else at each call.
  static constexpr bool fixed_arguments = (detail::tensor_leaves<Args, true>() && ...);

 public:
  explicit Loaded(Program program) : program_(std::move(program)) {
    detail::check_leaf_paths(program_, true, detail::leaf_paths(R{}));
    if constexpr (fixed_arguments) detail::check_leaf_paths(program_, false, detail::leaf_paths(std::tuple<Args...>{}));
  }

  R operator()(const Args&... args) const {
    const Leaves in = arguments(args...);
    std::vector<nx::Tensor> out = detail::run("rune::load", program_, std::span<const nx::Tensor>(in.data(), in.size()));
    return rebuild(R{}, std::span<const nx::Tensor>(out));
  }

  // Writes the results into `results`, whose leaves borrow caller memory
  // (nx::borrow of pointers to non-const) of the results' dtypes and shapes;
  // allocates nothing in the steady state.
  void into(const R& results, const Args&... args) const {
    const Leaves in = arguments(args...);
    Leaves out;
    for_each_leaf(results, [&](const nx::Tensor& t) { out.push_back(t); });
    detail::run_into("rune::load", program_, std::span<const nx::Tensor>(in.data(), in.size()),
                     std::span<const nx::Tensor>(out.data(), out.size()));
  }

  const Program& program() const { return program_; }

 private:
  using Leaves = boost::container::small_vector<nx::Tensor, 16>;

  Leaves arguments(const Args&... args) const {
    if constexpr (!fixed_arguments)
      detail::check_leaf_paths(program_, false, detail::leaf_paths(std::forward_as_tuple(args...)));
    Leaves in;
    for_each_leaf(std::forward_as_tuple(args...), [&](const nx::Tensor& t) { in.push_back(t); });
    return in;
  }

  Program program_;
};

// The program saved in `file` as a callable of the given signature.
template <class Signature> Loaded<Signature> load(const std::filesystem::path& file) {
  return Loaded<Signature>(load_program(file));
}

}  // namespace rune
