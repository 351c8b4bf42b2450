// The JVP trace: its values carry a primal and a tangent (forward-mode
// differentiation). The primal is computed by whatever is below (eagerly,
// or by an enclosing trace), so nx::item reads it and a C++ `if` takes one
// path. Tangents are concrete values (jvp) or values of a linear staging
// trace (linearization, for reverse mode).
#pragma once

#include "ir/trace.hpp"

namespace rune::ad {

// Whether a rune::detail::WithoutDerivatives lives on this thread.
bool derivatives_paused();

class JvpTrace final : public ir::Trace {
 public:
  // With `linear`, it linearizes: the tangents are values of that linear
  // staging trace below (reverse mode); without, they are concrete or
  // values of enclosing traces (forward mode).
  explicit JvpTrace(std::string_view entry_point, const ir::Trace* linear = nullptr);
  bool linearizing() const { return linear_ != nullptr; }

  // A value of this trace; a zero (undefined) tangent gives the primal back.
  nx::Tensor wrap(const nx::Tensor& primal, const nx::Tensor& tangent);
  // The primal and tangent of a value (for one this trace does not own: the
  // value itself and a zero tangent). Linearizing, a tangent that is not a
  // value of the linear trace is a zero a rule filled in (a constant or a
  // value of the primal program): it is given as a zero, so that what
  // consumes tangents records only into the linear program.
  nx::Tensor primal_of(const nx::Tensor& t) const;
  nx::Tensor tangent_of(const nx::Tensor& t) const;

  nx::Tensor process(ir::Prim p, std::span<const nx::Tensor> operands, const ir::Params& params,
                     const ir::TensorType& type) override;
  std::vector<nx::Tensor> process_construct(const ir::Equation& eq, std::span<const nx::Tensor> inputs) override;

 private:
  const ir::Trace* linear_;
};

}  // namespace rune::ad
