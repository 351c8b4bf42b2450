// rune::iterate's parts shared by its files: iterate.cpp (the rules and the
// table's entry) and iterate_batching.cpp.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/construct.hpp"

namespace rune::constructs {

// The groups of an iterate's inputs (ir/program.hpp's IterateInfo).
struct IterateParts {
  std::int64_t max;
  std::size_t carries, until_captures, step_captures;
  IterateParts(const ir::Equation& eq, std::size_t inputs);
  // The arguments of until and of the step, for a carry.
  std::vector<nx::Tensor> until_args(std::span<const nx::Tensor> inputs, std::span<const nx::Tensor> carry) const;
  std::vector<nx::Tensor> step_args(std::span<const nx::Tensor> inputs, std::span<const nx::Tensor> carry,
                                    const nx::Tensor& stop) const;
};

// "until is still false after max = 3 steps, in lane 1": the error of an
// iterate whose stop is false at `lane` (empty for one boolean; outermost
// map first).
std::string still_running(std::int64_t max, const nx::Index& lane);

// The loop on concrete inputs: the last carry, and the number of steps
// taken; `before_step` (when given) sees the carry and the stop of each
// step. Throws the error of a loop that reaches max.
struct Ran {
  std::vector<nx::Tensor> carry;
  std::int64_t trips = 0;
};
Ran run(const ir::Equation& eq, std::span<const nx::Tensor> inputs,
        const std::function<void(std::span<const nx::Tensor>, const nx::Tensor&)>& before_step = {});

// Forward mode and linearization, by the trips the loop takes (see
// iterate_derivatives.cpp).
std::vector<nx::Tensor> iterate_jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs);

// Under vmap: one iterate for every lane; each lane stops on its own (see
// iterate_batching.cpp).
std::vector<nx::Tensor> iterate_batched(batch::BatchTrace& trace, const ir::Equation& eq,
                                        std::span<const nx::Tensor> inputs);

}  // namespace rune::constructs
