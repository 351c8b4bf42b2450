// Source locations (docs/debugging.md#source-locations): the place of each
// nx call in errors, in the equations a trace records, in the program text
// and back, in the bytecode and the profile.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "helpers.hpp"
#include "ir/program.hpp"
#include "ir/text.hpp"
#include "ops/errors.hpp"
#include "rune/rune.hpp"
#include "vm/listing.hpp"

using nx::Tensor;

namespace {

const std::string here = "test_source_lines.cpp:";

std::string at(int line) { return here + std::to_string(line); }

// The sites of a program's equations, in order, sub-programs after their
// construct ("" for an equation without one).
void collect_sites(const rune::ir::Program& p, std::vector<std::string>& out) {
  for (const rune::ir::Equation& eq : p.equations) {
    if (eq.kind == rune::ir::OpKind::constant) continue;
    out.push_back(eq.site ? nx::ops::describe(eq.site) : "");
    for (const auto& sub : eq.programs) collect_sites(*sub, out);
  }
}
std::vector<std::string> sites(const rune::Program& p) {
  std::vector<std::string> out;
  collect_sites(p.ir(), out);
  return out;
}

const int energy_line = __LINE__ + 2;
Tensor energy(const Tensor& x) {
  Tensor stretch = x - 1.;                  // energy_line
  Tensor squared = nx::square(stretch);     // energy_line + 1 (a composite: its parts are placed here)
  return nx::mean(squared) + nx::sum(x);    // energy_line + 2
}

}  // namespace

TEST_CASE("an eager error names the line of the call, the outermost one written here") {
  const Tensor a = nx::ones(nx::float64, {3}), b = nx::ones(nx::float64, {2});
  const int line = __LINE__ + 1;
  CHECK_THROWS_WITH(nx::add(a, b), "nx::add: shapes [3] and [2] do not broadcast (at " + at(line) + ")");
  CHECK_THROWS_WITH(a * b, "nx::mul: shapes [3] and [2] do not broadcast (at " + at(line + 1) + ")");
  CHECK_THROWS_WITH(2. - b + a, "nx::add: shapes [2] and [3] do not broadcast (at " + at(line + 2) + ")");
  // A composite's parts (clamp: maximum, minimum) go under its caller's line and name.
  CHECK_THROWS_WITH(nx::clamp(a, b, b), "nx::clamp: shapes [3] and [2] do not broadcast (at " + at(line + 4) + ")");
  Tensor c = a;
  CHECK_THROWS_WITH(c += b, "nx::add: shapes [3] and [2] do not broadcast (at " + at(line + 6) + ")");
  CHECK_THROWS_WITH(nx::concatenate({a, nx::ones(nx::int32, {2})}),
                    Catch::EndsWith("(at " + at(line + 7) + ")"));
  // Reading a value is not a primitive's misuse: no place.
  CHECK_THROWS_WITH(nx::item(a, {7}), Catch::StartsWith("nx::item") && !Catch::Contains("(at "));
}

TEST_CASE("a traced equation carries the line of the call that made it; the text shows it when asked") {
  const Tensor x = nx::create(nx::float64, {3}, {1., 2., 3.});
  const rune::Program p = rune::program(energy, x);
  const std::vector<std::string> expected = {at(energy_line),     at(energy_line + 1), at(energy_line + 2),
                                             at(energy_line + 2), at(energy_line + 2), at(energy_line + 2)};
  CHECK(sites(p) == expected);
  const std::string shown = rune::to_string(p, rune::SourceLines::shown);
  CHECK(shown.find("  ; " + at(energy_line) + "\n") != std::string::npos);
  // Hidden by default: the text does not change when code above it moves.
  CHECK(rune::to_string(p).find(';') == std::string::npos);
  CHECK(rune::to_string(p) == rune::to_string(p, rune::SourceLines::hidden));

  // Read back: the same places, the same text; equal to the program without them.
  const rune::Program back = rune::parse_program(shown);
  CHECK(sites(back) == expected);
  CHECK(rune::to_string(back, rune::SourceLines::shown) == shown);
  CHECK(rune::ir::equal(back.ir(), rune::parse_program(rune::to_string(p)).ir()));

  // Saved files carry them.
  const auto file = std::filesystem::temp_directory_path() / "rune_test_source_lines.txt";
  rune::save_program(p, file);
  CHECK(sites(rune::load_program(file)) == expected);
  std::filesystem::remove(file);
}

TEST_CASE("the parser reads a comment of another form as a comment") {
  const rune::Program p = rune::parse_program(
      "program (%0)\n"
      "  %1 : float64 [2] at CPU = Map [neg(x0)] (x0: float64 [2] at CPU)  ; made by hand\n"
      "    with x0 = %0  ; a comment here too\n"
      "  %2 : float64 [2] at CPU = Map [exp(x0)] (x0: float64 [2] at CPU) ;game.cpp:12\n"
      "    with x0 = %1\n"
      "  return %2\n");
  CHECK(sites(p) == std::vector<std::string>{"", "game.cpp:12"});
  // A name longer than rune keeps is no place (the text still reads).
  const std::string long_name(5000, 'a');
  const rune::Program q = rune::parse_program("program (%0)\n  %1 : float64 [2] at CPU = Map [neg(x0)] (x0: float64 [2] at "
                                              "CPU)  ; " + long_name + ".cpp:3\n    with x0 = %0\n  return %1\n");
  CHECK(sites(q) == std::vector<std::string>{""});
}

TEST_CASE("a construct is placed at its call, its step's equations at theirs, a derivative's where its value was made") {
  const Tensor xs = nx::create(nx::float64, {4}, {1., 2., 3., 4.});
  const int line = __LINE__ + 2;
  auto prefix = [](const Tensor& v) {
    return rune::scan([](const Tensor& acc, const Tensor& row) { return std::pair{acc + row * row, acc}; },  // line
                      nx::scalar(nx::float64, 0.), v)                                                      // line + 1
        .first;
  };
  CHECK(sites(rune::program(prefix, xs)) == std::vector<std::string>{at(line), at(line), at(line)});
  // The gradient of x * sin(x): every equation of the forward and backward pass at that line.
  const int product_line = __LINE__ + 1;
  auto product = [](const Tensor& v) { return nx::sum(v * nx::sin(v)); };
  for (const std::string& site : sites(rune::program(rune::grad(product), xs))) CHECK(site == at(product_line));
}

TEST_CASE("a call made inside rune is not a place: nx::sin given to rune::jacfwd") {
  const Tensor x = nx::create(nx::float64, {2}, {0.5, 1.});
  for (const std::string& site : sites(rune::program([](const Tensor& v) { return rune::jacfwd(nx::sin, v); }, x)))
    CHECK(site.find(".hpp") == std::string::npos);
}

TEST_CASE("an error traced under jit names the line, and the function stays usable") {
  const int line = __LINE__ + 1;
  auto f = rune::jit([](const Tensor& v) { return v + nx::ones(nx::float64, {3}); });
  CHECK_THROWS_WITH(f(nx::ones(nx::float64, {2})), "nx::add: shapes [2] and [3] do not broadcast (at " + at(line) + ")");
  CHECK(test::values(f(nx::ones(nx::float64, {3}))) == std::vector<double>{2, 2, 2});
}

TEST_CASE("the bytecode and the profile carry the places through the passes") {
  const Tensor x = nx::create(nx::float64, {3}, {1., 2., 3.});
  auto f = rune::jit(energy);
  const std::string listed = rune::vm::listing(f.program(x).code(), /*source_lines=*/true);
  CHECK(listed.find("; " + at(energy_line)) != std::string::npos);
  CHECK(listed.find("; " + at(energy_line + 2)) != std::string::npos);
  CHECK(rune::vm::listing(f.program(x).code()).find(here) == std::string::npos);  // (not asked)
  const rune::Profile profile = rune::profile(f, x);
  bool placed = false;
  for (const rune::ProfileLine& line : profile.lines) placed = placed || line.source.starts_with(here);
  CHECK(placed);
  CHECK(profile.table().find("  ; " + here) != std::string::npos);
}
