// A program's linearization split in two programs, for constructs whose
// derivative keeps the primal computation in a construct of its own
// (rune::remat's backward pass, rune::collect): the primal program computes
// the outputs and the residuals (what the tangent operations read), the
// linear program maps the tangents and the residuals to the outputs'
// tangents.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ir/program.hpp"

namespace rune::ad {

struct Split {
  // Parameters: the program's; results: its results, then the residuals.
  std::shared_ptr<const ir::Program> primal;
  // Parameters: a tangent for each parameter in `slots`, then the
  // residuals; results: a tangent for each result (zeros where none).
  std::shared_ptr<const ir::Program> linear;
  std::size_t residuals = 0;
  // Values of enclosing traces the primal program reads (its last
  // parameters).
  std::vector<nx::Tensor> captures;
};

// `program` linearized at parameters of `types`; the parameters in `slots`
// carry a tangent.
Split split(const ir::Program& program, std::span<const ir::TensorType> types, const std::vector<bool>& slots);

// `program`'s forward derivative as one program (forward mode, where a
// split's linear part could hold pullbacks that do not run forward):
// parameters: the program's, then a tangent for each in `slots`; results:
// its results, then a tangent for each (zeros where none). `captures` as in
// Split.
struct Forward {
  std::shared_ptr<const ir::Program> program;
  std::vector<nx::Tensor> captures;
};
Forward forward(const ir::Program& program, std::span<const ir::TensorType> types, const std::vector<bool>& slots);

}  // namespace rune::ad
