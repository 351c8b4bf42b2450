// The gradient check of a gradient case: rune::grad of a scalar objective
// (each result weighted by a fixed random tensor, summed) against central
// differences and rune::jvp along random directions; the gradient traced
// into a program gives eager's bits by every executor; and second
// derivatives agree (second_order.hpp).
#pragma once

#include <string>

#include <rune/program.hpp>

#include "description.hpp"

namespace gen {

struct GradientCheck {
  std::string failure;  // empty when it holds
  int conclusive = 0;   // directions where the differences were stable
  int inconclusive = 0; // directions near a kink or a non-finite value
  rune::Program traced;  // the gradient's program
};

GradientCheck check_gradient(const Case& c);

}  // namespace gen
