// Embedding: named programs from compiled functions, the text's header,
// typed loading (rune::load), caller memory (nx::borrow) and results written
// into it (rune::run_into, Loaded::into) with no allocation per frame.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "allocations.hpp"
#include "examples/embed/host.hpp"
#include "helpers.hpp"
#include "ir/program.hpp"
#include "vm/executor.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using test::same_bits;

namespace game {
struct Body {
  Tensor position, velocity;
};
RUNE_TREE(Body, position, velocity);
// The same structure with another field name: its paths differ.
struct Renamed {
  Tensor position, speed;
};
RUNE_TREE(Renamed, position, speed);

// One explicit Euler step of a damped spring, dt a tensor argument.
Body step(const Body& b, const Tensor& dt) {
  Tensor force = -4. * b.position - 0.5 * b.velocity;
  Tensor v = b.velocity + force * dt;
  return {b.position + v * dt, v};
}
}  // namespace game

namespace {

game::Body body() {
  return {nx::create(nx::float64, {3}, {1., 2., 3.}), nx::create(nx::float64, {3}, {0., -1., 0.5})};
}
const Tensor dt = nx::scalar(nx::float64, 0.01);

std::filesystem::path temp_file(const char* name) { return std::filesystem::temp_directory_path() / name; }

}  // namespace

TEST_CASE("a compiled function's program names its parameters and results by their paths") {
  auto step = rune::jit(game::step);
  rune::Program p = step.program(body(), dt);
  REQUIRE(p.named());
  CHECK(std::vector<std::string>(p.param_names().begin(), p.param_names().end()) ==
        std::vector<std::string>{"0.position", "0.velocity", "1"});
  CHECK(std::vector<std::string>(p.result_names().begin(), p.result_names().end()) ==
        std::vector<std::string>{"position", "velocity"});
  CHECK(step.traces() == 1);
  (void)step(body(), dt);
  CHECK(step.traces() == 1);  // the call found the key program() traced
  const std::string text = rune::to_string(p);
  CHECK(text.rfind("rune program 1\n"
                   "parameter \"0.position\" : float64 [3] at CPU\n"
                   "parameter \"0.velocity\" : float64 [3] at CPU\n"
                   "parameter \"1\" : float64 [] at CPU\n"
                   "result \"position\" : float64 [3] at CPU\n"
                   "result \"velocity\" : float64 [3] at CPU\n"
                   "program (%0, %1, %2)\n",
                   0) == 0);
  rune::Program again = rune::parse_program(text);
  CHECK(again == p);
  CHECK(rune::to_string(again) == text);
}

TEST_CASE("a compiled function's program is the one its calls run, after the passes") {
  auto f = [](const Tensor& x) { return x * 2. + x * 2.; };  // the passes merge the two products
  const Tensor x = nx::ones(nx::float64, {4});
  CHECK(rune::program(f, x).ir().equations.size() > rune::jit(f).program(x).ir().equations.size());
}

TEST_CASE("a program without names prints no header; saved, it records the format") {
  rune::Program p = rune::program([](const Tensor& x) { return x + 1.; }, nx::zeros(nx::float64, {2}));
  CHECK(!p.named());
  CHECK(rune::to_string(p).rfind("program (%0)\n", 0) == 0);
  const auto file = temp_file("rune_test_unnamed.rune");
  rune::save_program(p, file);
  rune::Program loaded = rune::load_program(file);
  std::filesystem::remove(file);
  CHECK(loaded == p);
  CHECK(!loaded.named());
}

TEST_CASE("names with quotes, backslashes and control characters survive the text") {
  std::map<std::string, Tensor> args{{"a \"quoted\" \\ name\n", nx::ones(nx::float64, {2})}};
  rune::Program p = rune::jit([](const std::map<std::string, Tensor>& m) { return m.begin()->second * 3.; }).program(args);
  const std::string text = rune::to_string(p);
  CHECK(text.find("parameter \"0.a \\\"quoted\\\" \\\\ name\\x0a\" : float64 [2] at CPU") != std::string::npos);
  rune::Program again = rune::parse_program(text);
  CHECK(again.param_names()[0] == "0.a \"quoted\" \\ name\n");
  CHECK(again.result_names()[0] == "");
}

TEST_CASE("a malformed header is refused with its line and column") {
  const std::string body = "program (%0)\n  %1 : float64 [2] at CPU = Map [neg(x0)] (x0: float64 [2] at CPU)\n"
                           "    with x0 = %0\n  return %1\n";
  CHECK_THROWS_WITH(rune::parse_program("rune program 2\n" + body),
                    "rune::parse_program: line 1, column 14: the text has format 2; this rune reads format 1");
  CHECK_THROWS_WITH(
      rune::parse_program("rune program 1\nparameter \"x\" : float32 [2] at CPU\nresult \"\" : float64 [2] at CPU\n" + body),
      "rune::parse_program: line 2, column 1: parameter 0 is float64 [2] at CPU in the program, float32 [2] at CPU in "
      "the header");
  CHECK_THROWS_WITH(rune::parse_program("rune program 1\nparameter \"x\" : float64 [2] at CPU\n" + body),
                    "rune::parse_program: line 2, column 1: the header names 0 results, the program returns 1");
  CHECK_THROWS_WITH(rune::parse_program("rune program 1\nparameter \"x\\q\" : float64 [2] at CPU\n" + body),
                    "rune::parse_program: line 2, column 14: expected an escape (\\\\, \\\" or \\xHH), found 'q'");
  CHECK_THROWS_WITH(rune::parse_program("rune program 1\nparameter \"x : float64 [2] at CPU\n" + body),
                    "rune::parse_program: line 2, column 34: expected '\"' closing the name, found end of line");
}

TEST_CASE("rune::load gives a callable of the saved structures") {
  auto step = rune::jit(game::step);
  const auto file = temp_file("rune_test_step.rune");
  rune::save_program(step.program(body(), dt), file);
  auto loaded = rune::load<game::Body(game::Body, Tensor)>(file);
  std::filesystem::remove(file);
  game::Body a = loaded(body(), dt), b = step(body(), dt);
  CHECK(same_bits(a.position, b.position));
  CHECK(same_bits(a.velocity, b.velocity));

  CHECK_THROWS_WITH(loaded(game::Body{nx::zeros(nx::float32, {3}), nx::zeros(nx::float64, {3})}, dt),
                    "rune::load: argument 0.position is float32 [3], the program takes float64 [3]");
}

TEST_CASE("rune::load names the first difference between the declared types and the saved program") {
  rune::Program p = rune::jit(game::step).program(body(), dt);
  CHECK_THROWS_WITH(rune::Loaded<game::Body(game::Renamed, Tensor)>(p),
                    "rune::load: argument 1 is 0.speed in the declared type, 0.velocity in the saved program");
  CHECK_THROWS_WITH(rune::Loaded<game::Renamed(game::Body, Tensor)>(p),
                    "rune::load: result 1 is speed in the declared type, velocity in the saved program");
  CHECK_THROWS_WITH(rune::Loaded<game::Body(game::Body)>(p),
                    "rune::load: the declared arguments have 2 tensor leaves, the saved program takes 3");
  CHECK_THROWS_WITH(rune::Loaded<Tensor(game::Body, Tensor)>(p),
                    "rune::load: the declared result has 1 tensor leaf, the saved program returns 2");
  // Arguments whose number of leaves their values decide are checked at the call.
  rune::Program q = rune::jit([](const std::vector<Tensor>& v) { return v[0] + v[1]; })
                        .program(std::vector<Tensor>{dt, dt});
  rune::Loaded<Tensor(std::vector<Tensor>)> sum(q);
  CHECK(nx::item(sum(std::vector<Tensor>{dt, dt})) == 0.02);
  CHECK_THROWS_WITH(sum(std::vector<Tensor>{dt}),
                    "rune::load: the declared arguments have 1 tensor leaf, the saved program takes 2");
}

TEST_CASE("text without a header loads as a typed callable, checked by its counts") {
  rune::Program p = rune::parse_program(rune::to_string(rune::program(game::step, body(), dt)));
  rune::Loaded<game::Body(game::Body, Tensor)> loaded(p);
  CHECK(same_bits(loaded(body(), dt).velocity, game::step(body(), dt).velocity));
  CHECK_THROWS_WITH(rune::run(p, {nx::zeros(nx::float32, {3}), dt, dt}),
                    "rune::run: argument 0 is float32 [3], the program takes float64 [3]");
}

TEST_CASE("nx::borrow views caller memory without a copy") {
  std::vector<double> data{1., 2., 3., 4., 5., 6.};
  Tensor t = nx::borrow(nx::float64, {2, 3}, data.data());
  CHECK(nx::ops::data_of<double>(t) == data.data());
  CHECK(test::text(nx::sum(t, {1})) == "float64 [2] [6, 15]");
  const std::vector<double>& read_only = data;
  CHECK(nx::ops::data_of<const double>(nx::borrow(nx::float64, {6}, read_only.data())) == data.data());
  CHECK_THROWS_WITH(nx::borrow(nx::float64, {2}, static_cast<void*>(nullptr)), "nx::borrow: the pointer is null");
  CHECK_THROWS_WITH(nx::borrow(nx::float64, {2}, reinterpret_cast<char*>(data.data()) + 1),
                    "nx::borrow: the pointer is not aligned to float64's 8 bytes");
  CHECK_THROWS_WITH(nx::donate(t), "nx::donate: the tensor borrows caller memory (nx::borrow), which is never donated");
}

TEST_CASE("results are written into caller memory, the arguments' own included") {
  rune::Program p = rune::jit(game::step).program(body(), dt);
  std::vector<double> position{1., 2., 3.}, velocity{0., -1., 0.5}, step_dt{0.01};
  const game::Body expected = game::step(body(), dt);
  game::Body state{nx::borrow(nx::float64, {3}, position.data()), nx::borrow(nx::float64, {3}, velocity.data())};
  const Tensor in[] = {state.position, state.velocity, nx::borrow(nx::float64, {}, step_dt.data())};
  const Tensor out[] = {state.position, state.velocity};  // in place: each result computed before any is written
  rune::run_into(p, in, out);
  CHECK(same_bits(nx::create(nx::float64, {3}, {position[0], position[1], position[2]}), expected.position));
  CHECK(same_bits(nx::create(nx::float64, {3}, {velocity[0], velocity[1], velocity[2]}), expected.velocity));

  // Results that are arguments, swapped in place.
  rune::Program swap = rune::jit([](const Tensor& a, const Tensor& b) { return std::pair{b, a}; }).program(dt, dt);
  std::vector<double> x{1.}, y{2.};
  const Tensor xy[] = {nx::borrow(nx::float64, {}, x.data()), nx::borrow(nx::float64, {}, y.data())};
  rune::run_into(swap, xy, xy);
  CHECK((x[0] == 2. && y[0] == 1.));
  // ... and into other memory (written straight from the arguments: no buffer overlaps them).
  std::vector<double> z{0.}, w{0.};
  const Tensor zw[] = {nx::borrow(nx::float64, {}, z.data()), nx::borrow(nx::float64, {}, w.data())};
  rune::run_into(swap, xy, zw);
  CHECK((z[0] == 1. && w[0] == 2. && x[0] == 2. && y[0] == 1.));

  // A result computed straight into an argument's memory only where nothing reads the argument after:
  // here the sum reads x after the kernel, and x's transpose is x's own memory in another order.
  auto f = [](const Tensor& m) { return std::tuple{nx::exp(m) * 2. + 1., nx::sum(m, {0}), nx::transpose(m)}; };
  std::vector<double> a{1., 2., 3., 4.}, sums(2), t{0., 0., 0., 0.};
  const Tensor m = nx::borrow(nx::float64, {2, 2}, a.data());
  const auto wanted = f(nx::create(nx::float64, {2, 2}, {1., 2., 3., 4.}));
  rune::Program fp = rune::jit(f).program(m);
  const Tensor m_in[] = {m};
  const Tensor into_m[] = {m, nx::borrow(nx::float64, {2}, sums.data()), nx::borrow(nx::float64, {2, 2}, t.data())};
  rune::run_into(fp, m_in, into_m);
  CHECK(same_bits(nx::create(nx::float64, {2, 2}, {a[0], a[1], a[2], a[3]}), std::get<0>(wanted)));
  CHECK(same_bits(nx::create(nx::float64, {2}, {sums[0], sums[1]}), std::get<1>(wanted)));
  CHECK(t == std::vector<double>{1., 3., 2., 4.});
  std::vector<double> b{1., 2., 3., 4.};
  const Tensor n = nx::borrow(nx::float64, {2, 2}, b.data());
  const Tensor n_in[] = {n};
  rune::Program transposed = rune::jit([](const Tensor& x) { return nx::transpose(x); }).program(n);
  rune::run_into(transposed, n_in, n_in);
  CHECK(b == std::vector<double>{1., 3., 2., 4.});
}

TEST_CASE("rune::run_into refuses results that are not writable caller memory of the results' types") {
  rune::Program p = rune::jit(game::step).program(body(), dt);
  const game::Body b = body();
  const Tensor in[] = {b.position, b.velocity, dt};
  std::vector<double> memory(6);
  const std::vector<double>& read_only = memory;
  const Tensor owned[] = {nx::zeros(nx::float64, {3}), nx::zeros(nx::float64, {3})};
  const char* not_caller = "rune::run_into: result position is not writable caller memory in C order (nx::borrow of "
                           "a pointer to non-const)";
  CHECK_THROWS_WITH(rune::run_into(p, in, owned), not_caller);
  const Tensor constant[] = {nx::borrow(nx::float64, {3}, read_only.data()), nx::borrow(nx::float64, {3}, memory.data() + 3)};
  CHECK_THROWS_WITH(rune::run_into(p, in, constant), not_caller);
  const Tensor wrong[] = {nx::borrow(nx::float32, {3}, memory.data()), nx::borrow(nx::float64, {3}, memory.data() + 3)};
  CHECK_THROWS_WITH(rune::run_into(p, in, wrong),
                    "rune::run_into: result position is float32 [3], the program returns float64 [3]");
  const Tensor shared[] = {nx::borrow(nx::float64, {3}, memory.data()), nx::borrow(nx::float64, {3}, memory.data() + 2)};
  CHECK_THROWS_WITH(rune::run_into(p, in, shared), "rune::run_into: result velocity and result position share memory");
  const Tensor few[] = {nx::borrow(nx::float64, {3}, memory.data())};
  CHECK_THROWS_WITH(rune::run_into(p, in, few), "rune::run_into: the program returns 2 results, got 1");
  const Tensor outs[] = {nx::borrow(nx::float64, {3}, memory.data()), nx::borrow(nx::float64, {3}, memory.data() + 3)};
  CHECK_THROWS_WITH(rune::jit([&](const Tensor& x) {
                      const Tensor args[] = {x, x, dt};
                      rune::run_into(p, args, outs);
                      return x;
                    })(b.position),
                    "rune::run_into: writes results into caller memory: it runs on concrete values, outside a trace");
}

TEST_CASE("a frame loop on caller memory allocates nothing in its steady state") {
  // (AddressSanitizer builds count nothing; the reference interpreter, the
  // VM's oracle, allocates as it goes)
  if (!test::counting || rune::vm::reference_selected()) return;
  auto loaded = rune::Loaded<game::Body(game::Body, Tensor)>(rune::jit(game::step).program(body(), dt));
  std::vector<double> position{1., 2., 3.}, velocity{0., -1., 0.5}, step_dt{0.01};
  const game::Body state{nx::borrow(nx::float64, {3}, position.data()), nx::borrow(nx::float64, {3}, velocity.data())};
  const Tensor frame_dt = nx::borrow(nx::float64, {}, step_dt.data());
  for (int frame = 0; frame < 10; ++frame) loaded.into(state, state, frame_dt);  // (pools fill)
  const long before = test::allocations.load();
  for (int frame = 0; frame < 1000; ++frame) loaded.into(state, state, frame_dt);
  CHECK(test::allocations.load() - before == 0);
  // The same 1,010 steps, eagerly.
  game::Body eager = body();
  for (int frame = 0; frame < 1010; ++frame) eager = game::step(eager, dt);
  CHECK(same_bits(nx::create(nx::float64, {3}, {position[0], position[1], position[2]}), eager.position));
}

TEST_CASE("the embedding example's game runs 1,000 frames on its own arrays with no allocation, as plain C++ would") {
  const auto file = temp_file("rune_test_chain_step.rune");
  const std::int64_t masses = 32;
  const chain::State like{nx::zeros(nx::float64, {masses}), nx::zeros(nx::float64, {masses})};
  rune::save_program(rune::jit(chain::step).program(like, nx::scalar(nx::float64, chain::frame_dt)), file);
  chain::Host host(file, masses);
  std::filesystem::remove(file);
  for (int frame = 0; frame < 10; ++frame) host.frame();  // (pools fill)
  const long before = test::allocations.load();
  for (int frame = 0; frame < 1000; ++frame) host.frame();
  if (test::counting && !rune::vm::reference_selected()) CHECK(test::allocations.load() - before == 0);

  std::vector<double> position(masses, 0.), velocity(masses, 0.);
  for (int frame = 0; frame < 1010; ++frame) chain::step_plain(position.data(), velocity.data(), masses, chain::frame_dt);
  CHECK(std::equal(position.begin(), position.end(), host.position().begin()));
}

TEST_CASE("a load reads at most 256 MiB, and a folder is a file it cannot read (issue 25)") {
  CHECK_THROWS_WITH(rune::load_program("/dev/zero"),
                    "rune::load_program: cannot read /dev/zero: it is longer than 268435456 bytes, the most rune "
                    "reads of a file");
  const std::string folder = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH(rune::load_program(folder), "rune::load_program: cannot read " + folder + ": Is a directory");
  CHECK_THROWS_WITH(rune::load_program("/nonexistent/step.rune"),
                    "rune::load_program: cannot read /nonexistent/step.rune: No such file or directory");
}

TEST_CASE("a NUL in a saved path is escaped in messages, not cut there (issue 25)") {
  std::map<std::string, Tensor> args{{std::string("a\0b", 3), nx::ones(nx::float64, {2})}};
  rune::Program p = rune::jit([](const std::map<std::string, Tensor>& m) { return m.begin()->second * 3.; }).program(args);
  rune::Program again = rune::parse_program(rune::to_string(p));
  CHECK(again.param_names()[0] == std::string("0.a\0b", 5));
  CHECK_THROWS_WITH((rune::Loaded<Tensor(std::map<std::string, Tensor>)>(again)(
                        std::map<std::string, Tensor>{{"ab", nx::ones(nx::float64, {2})}})),
                    "rune::load: argument 0 is 0.ab in the declared type, 0.a\\x00b in the saved program");
}

TEST_CASE("a text names no object of the process that traced it: totals collected outside, named maps (issue 25)") {
  // A total the program adds to but does not collect: refused by save, and by parse.
  rune::Total energy;
  auto add = [&](const Tensor& x) {
    energy.add(x);
    return x * 2.;
  };
  rune::Program adds = rune::program(add, dt);
  CHECK_THROWS_WITH(rune::save_program(adds, temp_file("rune_never.rune")),
                    "rune::save_program: the program adds to a rune::Total that it does not collect, an object of "
                    "this process; collect the total inside the saved function");
  CHECK_THROWS_WITH(rune::parse_program(rune::to_string(adds)),
                    Catch::Matchers::Contains("total_add adds to total") &&
                        Catch::Matchers::Contains("which no collect around it opens"));
  // Collected inside the program, the total is the program's own: saved, loaded and run.
  auto collected = [&](const Tensor& x) {
    auto [y, total] = rune::collect(energy, nx::scalar(nx::float64, 0.), [&] { return add(x) + add(x * 3.); });
    return std::pair{y, total};
  };
  const auto file = temp_file("rune_collected.rune");
  const Tensor half = nx::scalar(nx::float64, 0.5);
  rune::save_program(rune::program(collected, half), file);
  rune::Program loaded = rune::load_program(file);
  std::filesystem::remove(file);
  const std::vector<Tensor> out = rune::run(loaded, {half});
  CHECK(nx::item(out[0]) == 4.);
  CHECK(nx::item(out[1]) == 2.);
}
