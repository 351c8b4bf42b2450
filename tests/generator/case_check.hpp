// Checks a whole case and keeps a tally of what the cases reached, so the
// test can tell that the generator covers the primitive table and the
// constructs.
#pragma once

#include <bitset>
#include <string>

#include "description.hpp"
#include "ops/primitive.hpp"

namespace gen {

struct Tally {
  int cases = 0, expected_errors = 0, gradient_cases = 0;
  int conclusive_directions = 0, inconclusive_directions = 0;
  std::bitset<nx::ops::prim_count> primitives;  // seen in traced programs (functions and gradients)
  std::bitset<nx::dtype_count> dtypes;         // of the values of traced programs
  int scans = 0, nested_scans = 0, scans_with_captures = 0;
  // In traced programs (functions and gradients), at any depth; a switch is
  // a cond of other than two branches (a switch_ of two is one as well).
  int iterates = 0, conds = 0, switches = 0, remats = 0, collects = 0, total_adds = 0;
  int nested_constructs = 0;   // constructs inside constructs' programs
  int iterate_errors = 0;      // cases whose iterate runs past its max
  // The constructs (by ir::OpKind) in the programs of gradient cases'
  // functions: derivatives went through them.
  std::bitset<16> differentiated;
  int empty_values = 0, scalar_values = 0;     // values with an axis of 0; 0-d values
  // Cases holding a rune::vmap; of those, with a total, an nx::check, rune::lanes.
  int maps = 0, map_totals = 0, map_checks = 0, map_lanes = 0;
};

// Runs every check on the case: eager against the model's types, the
// program's text round trip, every executor's bits, and for gradient cases
// the gradient. Gives a report naming the seed, the description and the
// program text when a check fails, else an empty string.
std::string check_case(const Case& c, Tally& tally);

}  // namespace gen
