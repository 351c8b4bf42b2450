// The cond construct's parts shared by its files: cond.cpp (its entry
// points, type, eager and stepping rules, text, table entry),
// cond_derivatives.cpp and cond_batching.cpp.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ir/construct.hpp"
#include "rune/cond.hpp"

namespace rune::constructs {

using Branches = detail::TracedBranches;

// Branches taking the same parameters: the shared ones, then every branch's
// captures (in branch order, each value once), those a branch does not read
// being unused parameters of its program.
struct UnitedBranches {
  std::vector<std::shared_ptr<const ir::Program>> programs;
  std::vector<nx::Tensor> captures;
};
UnitedBranches unite(const Branches& branches, std::size_t shared);

// Applies a cond of the branches over `operands` then their captures;
// `api` names the entry point in errors.
std::vector<nx::Tensor> bind_united(const UnitedBranches& branches, const nx::Tensor& index,
                                    std::span<const nx::Tensor> operands, std::string_view api);

// Forward mode: a cond over the branches' JVPs. Linearization: each
// branch's JVP split into a primal branch that also returns the residuals
// of every branch (zeros for the others'), and a linear branch over the
// tangents and residuals, recorded as a cond in the linear program.
std::vector<nx::Tensor> cond_jvp(ad::JvpTrace& trace, const ir::Equation& eq, std::span<const nx::Tensor> inputs);

// A cond over the transposed branches, from the output cotangents and the
// fixed operands to the cotangents of the linear ones.
std::vector<nx::Tensor> cond_transpose(const ir::Equation& eq, std::span<const nx::Tensor> inputs,
                                       std::span<const ir::TensorType> input_types,
                                       std::span<const nx::Tensor> output_cotangents);

// Under vmap: with one index for every lane, a cond of the batched branches;
// with one per lane, every branch computed and each lane's selected.
std::vector<nx::Tensor> cond_batched(batch::BatchTrace& trace, const ir::Equation& eq,
                                     std::span<const nx::Tensor> inputs);

}  // namespace rune::constructs
