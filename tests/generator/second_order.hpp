// The second derivative of a gradient case along two directions v and u:
// <H v, u> by forward over reverse (rune::jvp of rune::grad) and by reverse
// over reverse (rune::grad of <rune::grad, u>) agree, and match central
// differences of <gradient, u> along v.
#pragma once

#include <string>

#include "description.hpp"
#include "objective.hpp"

namespace gen {

std::string check_second_order(const Case& c, const Objective& J, Rng& rng);

}  // namespace gen
