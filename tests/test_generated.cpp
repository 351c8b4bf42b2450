// Random programs from the generator (tests/generator/): each traced program
// round trips through its text, every executor gives eager's bits, and the
// gradients of float64 cases match central differences.
//
// RUNE_GENERATED_CASES sets how many seeds run (default 3000, from 0);
// RUNE_GENERATED_SEED=n runs seed n alone, as a failure report says.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "generator/case_check.hpp"
#include "generator/generator.hpp"
#include "generator/generators.hpp"
#include "helpers.hpp"
#include "ir/program.hpp"

namespace {

std::uint64_t from_environment(const char* name, std::uint64_t otherwise) {
  const char* text = std::getenv(name);
  return text ? std::stoull(text) : otherwise;
}

// A run large enough that every primitive and construct should show up.
void check_coverage(const gen::Tally& tally) {
  for (int i = 0; i < nx::ops::prim_count; ++i) {
    INFO("primitive " << nx::ops::info(nx::ops::Prim(i)).name);
    // (the collectives need a map, which cases have not: test_vmap.cpp tests
    // them; the ranks' need processes: tests/ranks)
    if (nx::ops::communicates(nx::ops::Prim(i))) continue;
    CHECK(tally.primitives[std::size_t(i)]);
  }
  for (int d = 0; d < nx::dtype_count; ++d) {
    INFO("dtype " << nx::name(nx::DType(d)));
    CHECK(tally.dtypes[std::size_t(d)]);
  }
  CHECK(tally.nested_scans > 0);
  CHECK(tally.scans_with_captures > 0);
  CHECK(tally.iterates > 0);
  CHECK(tally.conds > 0);
  CHECK(tally.switches > 0);
  CHECK(tally.remats > 0);
  CHECK(tally.collects > 0);
  CHECK(tally.total_adds > 0);
  CHECK(tally.nested_constructs > tally.nested_scans);
  using rune::ir::OpKind;
  for (OpKind kind : {OpKind::scan, OpKind::iterate, OpKind::cond, OpKind::remat, OpKind::collect}) {
    INFO("construct " << int(kind) << " in the function of a gradient case");
    CHECK(tally.differentiated[std::size_t(kind)]);
  }
  CHECK(tally.expected_errors > tally.iterate_errors);  // (a scan over 0 rows)
  CHECK(tally.iterate_errors > 0);
  CHECK(tally.empty_values > 0);
  CHECK(tally.scalar_values > 0);
  CHECK(tally.conclusive_directions > 4 * tally.inconclusive_directions);
  CHECK(tally.maps > 0);
  CHECK(tally.map_lanes > 0);
}

}  // namespace

TEST_CASE("generated programs round trip, give eager's bits on every executor, and differentiate") {
  const char* one = std::getenv("RUNE_GENERATED_SEED");
  const std::uint64_t first = one ? std::stoull(one) : 0;
  const std::uint64_t count = one ? 1 : from_environment("RUNE_GENERATED_CASES", 3000);
  gen::Tally tally;
  int failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t seed = first; seed < first + count && failures < 5; ++seed) {
    const std::string found = gen::check_case(gen::generate(seed), tally);
    if (!found.empty()) ++failures;
    if (!found.empty()) FAIL_CHECK(found);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::cout << tally.cases << " cases in " << took.count() << " s (" << tally.gradient_cases << " with gradients: "
            << tally.conclusive_directions << " directions checked, " << tally.inconclusive_directions
            << " near a kink; " << tally.scans << " scans, " << tally.nested_scans << " nested; " << tally.iterates
            << " iterates, " << tally.conds << " conds, " << tally.switches << " switches, " << tally.remats
            << " remats, " << tally.collects << " collects, " << tally.total_adds << " adds; "
            << tally.nested_constructs << " constructs nested; " << tally.expected_errors << " expected errors, "
            << tally.iterate_errors << " of iterate; " << tally.maps << " with maps: " << tally.map_lanes
            << " with rune::lanes, " << tally.map_totals << " with totals, " << tally.map_checks << " with checks)\n";
  for (const gen::MapKind& k : gen::map_kinds())
    if (!k.on) std::cout << "map cases of kind " << k.name << " are off until " << k.off_until << " is fixed\n";
  if (count >= 2000) check_coverage(tally);
}

// Seeds beyond the default run that once found a bug (the fix's regression).
TEST_CASE("seeds that found bugs") {
  gen::Tally tally;
  for (std::uint64_t seed : {7827}) {  // a pullback in a branch fed a zero-filled tangent
    INFO("seed " << seed);
    CHECK(gen::check_case(gen::generate(seed), tally) == "");
  }
}

TEST_CASE("a seed gives the same case every time") {
  for (std::uint64_t seed : {1, 2, 77}) {
    const gen::Case a = gen::generate(seed), b = gen::generate(seed);
    CHECK(gen::to_string(a.function) == gen::to_string(b.function));
    REQUIRE(a.args.size() == b.args.size());
    for (std::size_t i = 0; i < a.args.size(); ++i) CHECK(nx::to_string(a.args[i]) == nx::to_string(b.args[i]));
  }
}
