#include "case_check.hpp"

#include <rune/jit.hpp>

#include "checks.hpp"
#include "generator.hpp"
#include "gradient.hpp"
#include "ir/program.hpp"

namespace gen {

namespace {

using nx::Tensor;

using rune::ir::OpKind;

void count(const rune::ir::Program& p, Tally& tally, int depth) {
  for (const auto& t : p.types) {
    tally.dtypes.set(std::size_t(t.dtype));
    tally.empty_values += nx::numel(t.shape) == 0;
    tally.scalar_values += t.shape.empty();
  }
  for (const auto& eq : p.equations) {
    if (eq.kind == OpKind::primitive) tally.primitives.set(std::size_t(eq.prim));
    if (!rune::ir::is_construct(eq.kind)) continue;
    tally.nested_constructs += depth > 0;
    switch (eq.kind) {
      case OpKind::scan: {
        ++tally.scans;
        tally.nested_scans += depth > 0;
        const auto& scan = std::get<rune::ir::ScanInfo>(eq.info);
        tally.scans_with_captures += int(eq.inputs.size()) > scan.carry_count + scan.xs_count;
        break;
      }
      case OpKind::iterate: ++tally.iterates; break;
      case OpKind::cond: ++(eq.programs.size() == 2 ? tally.conds : tally.switches); break;
      case OpKind::remat: ++tally.remats; break;
      case OpKind::collect: ++tally.collects; break;
      case OpKind::total_add: ++tally.total_adds; break;
      default: break;
    }
    for (const auto& sub : eq.programs) count(*sub, tally, depth + 1);
  }
}

// The constructs a program holds, at any depth.
void constructs_in(const rune::ir::Program& p, std::bitset<16>& seen) {
  for (const auto& eq : p.equations) {
    if (rune::ir::is_construct(eq.kind)) seen.set(std::size_t(eq.kind));
    for (const auto& sub : eq.programs) constructs_in(*sub, seen);
  }
}

std::string report(const Case& c, const std::string& what, const rune::Program& traced) {
  std::string s = "seed " + std::to_string(c.seed) + " (RUNE_GENERATED_SEED=" + std::to_string(c.seed) +
                  " reruns it): " + what + "\n--- the case\n" + to_string(c.function) + "--- its arguments\n";
  for (const Tensor& t : c.args) s += nx::to_string(t) + "\n";
  if (traced.shared()) s += "--- its program\n" + rune::to_string(traced);
  return s;
}

// Every route must throw the case's error: eagerly, tracing (a scan over 0
// rows) or running the traced program, or its text loaded (an iterate past
// its max), compiling or running compiled.
std::string check_error(const Case& c) {
  const auto f = function_of(c);
  const std::pair<const char*, std::function<void()>> routes[] = {
      {"eagerly", [&] { evaluate(c.function, c.args); }},
      {"rune::program and rune::run", [&] { rune::run(rune::program(f, c.args), c.args); }},
      {"rune::run of the parsed text (where it has text: an nx::check has none)",
       [&] {
         const rune::Program traced = rune::program(f, c.args);
         rune::run(has_text(traced.ir()) ? rune::parse_program(rune::to_string(traced)) : traced, c.args);
       }},
      {"rune::jit", [&] { rune::jit(f)(c.args); }},
  };
  for (const auto& [name, route] : routes) {
    try {
      route();
      return std::string(name) + " did not throw '" + *c.error + "'";
    } catch (const std::invalid_argument& e) {
      if (e.what() != *c.error) return std::string(name) + " threw '" + e.what() + "', not '" + *c.error + "'";
    }
  }
  return {};
}

std::string check_gradient_case(const Case& c, Tally& tally) {
  ++tally.gradient_cases;
  GradientCheck g = check_gradient(c);
  tally.conclusive_directions += g.conclusive;
  tally.inconclusive_directions += g.inconclusive;
  if (g.traced.shared()) count(g.traced.ir(), tally, 0);
  return g.failure;
}

// rune::vmap against its lanes one at a time: the case with every map run
// as a loop gives the same bits.
std::string check_maps(const Case& c, Tally& tally, const std::vector<Tensor>& eager) {
  if (!holds(c.function, Kind::map)) return {};
  ++tally.maps;
  tally.map_totals += holds(c.function, Kind::total_add, true);
  tally.map_checks += holds(c.function, Kind::check, true);
  tally.map_lanes += holds(c.function, Kind::lanes, true);
  if (std::string found = compare_bits(evaluate_unmapped(c.function, c.args), eager); !found.empty())
    return "rune::vmap differs from its lanes run one at a time (eager is vmap's): " + found;
  return {};
}

std::string check_values(const Case& c, Tally& tally, rune::Program& traced) {
  const std::vector<Tensor> eager = evaluate(c.function, c.args);
  if (std::string found = check_types(eager, c.function); !found.empty()) return found;
  if (std::string found = check_maps(c, tally, eager); !found.empty()) return found;
  std::string found = check_function(function_of(c), c.args, eager, &traced);
  if (!found.empty()) return found;
  count(traced.ir(), tally, 0);
  if (c.gradient) constructs_in(traced.ir(), tally.differentiated);
  return c.gradient ? check_gradient_case(c, tally) : std::string();
}

}  // namespace

std::string check_case(const Case& c, Tally& tally) {
  ++tally.cases;
  rune::Program traced;
  std::string found;
  try {
    if (c.error) ++tally.expected_errors;
    if (c.error && c.error->starts_with("rune::iterate")) ++tally.iterate_errors;
    found = c.error ? check_error(c) : check_values(c, tally, traced);
  } catch (const std::exception& e) {
    found = std::string("threw: ") + e.what();
  }
  return found.empty() ? found : report(c, found, traced);
}

}  // namespace gen
