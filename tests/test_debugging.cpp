// Looking inside compiled code (rune/debug.hpp). The profiler
// (rune::profile, RUNE_PROFILE=1): every instruction a compiled call runs,
// summed over its runs (a scan's step over its rows), its own time within
// its total, the bytes it wrote; only this thread's; an instruction that
// throws leaves the profiler sound. The NaN hunt (rune::debug_nans,
// RUNE_DEBUG_NANS=1): the first NaN or infinity made from finite operands,
// eager or compiled, named with its primitive, element, row or trip.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;

namespace {

const rune::ProfileLine& line_with(const rune::Profile& p, const std::string& text) {
  auto at = std::find_if(p.lines.begin(), p.lines.end(),
                         [&](const rune::ProfileLine& l) { return l.instruction.find(text) != std::string::npos; });
  REQUIRE(at != p.lines.end());
  return *at;
}

// Lorenz-like: a scan of 50 rows over [1000] carries, each row one fused kernel.
auto rows_of_kernels = rune::jit([](const Tensor& x, const Tensor& k) {
  auto step = [&](const Tensor& c, const Tensor& row) {
    Tensor next = nx::sin(c * k + row);
    return std::pair{next, nx::sum(next * next)};
  };
  return rune::scan(step, x, nx::ones(nx::float64, {50, 1000})).second;
});

// Runs this test program again with `environment` on the hidden case
// `tag`; gives its exit status and what it wrote (stdout and stderr).
std::pair<int, std::string> run_this_test(const std::string& environment, const std::string& tag) {
  const std::string log = std::filesystem::temp_directory_path() / ("rune_debugging_" + std::to_string(::getpid()));
  // (the program's path read in the process: under an emulator, the shell
  // would find the emulator at /proc/PID/exe)
  const std::string command = environment + " '" + std::filesystem::read_symlink("/proc/self/exe").string() + "' '" +
                              tag + "' > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(log);
  return {status, text};
}

}  // namespace

TEST_CASE("rune::profile: each instruction once a line, a scan's step summed over its rows") {
  const Tensor x = nx::zeros(nx::float64, {1000}), k = nx::scalar(nx::float64, 0.5);
  rune::Profile p = rune::profile(rows_of_kernels, x, k);
  const std::string bytecode = rune::bytecode(rows_of_kernels.program(x, k));
  REQUIRE(p.lines.size() == 2);
  const rune::ProfileLine& scan = line_with(p, "= scan 0");
  const rune::ProfileLine& kernel = line_with(p, "= fused 0");
  CHECK(scan.calls == 1);
  CHECK(scan.within == -1);
  CHECK(kernel.calls == 50);  // one a row
  CHECK(kernel.within == int(&scan - p.lines.data()));
  CHECK(kernel.instruction.find("([1000], ") != std::string::npos);
  CHECK(kernel.bytes == 50 * (1000 * 8 + 8));  // the carry and the row's sum, each row
  CHECK(scan.bytes == 1000 * 8 + 50 * 8);      // the last carry and the ys
  // Own times add up to the outermost instruction's total.
  CHECK(scan.seconds <= scan.total_seconds);
  CHECK(kernel.seconds == kernel.total_seconds);
  CHECK(p.seconds() == Approx(scan.total_seconds).epsilon(1e-9));
  // The most time first.
  for (std::size_t i = 1; i < p.lines.size(); ++i) CHECK(p.lines[i - 1].seconds >= p.lines[i].seconds);
  // The table: a header, a line per instruction, the total.
  const std::string table = p.table();
  CHECK(table.find("instruction\n") != std::string::npos);
  CHECK(table.find("(in #") != std::string::npos);
  CHECK(table.find("in 2 instructions\n") != std::string::npos);
}

TEST_CASE("rune::profile sees this thread's calls only, and eager loops too") {
  const Tensor x = nx::zeros(nx::float64, {1000}), k = nx::scalar(nx::float64, 0.5);
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop) rows_of_kernels(x, k);
  });
  rune::Profile p = rune::profile([&] { rows_of_kernels(x, k); });
  stop = true;
  other.join();
  CHECK(line_with(p, "= scan 0").calls == 1);
  // An eager scan runs on the VM too (a step of tensors: never machine code).
  rune::Profile eager = rune::profile([] {
    rune::scan([](const Tensor& c, const Tensor& r) { return std::pair{c + r, c}; }, nx::zeros(nx::float64, {2}),
               nx::ones(nx::float64, {7, 2}));
  });
  CHECK(line_with(eager, "scan").calls == 1);
  CHECK(line_with(eager, " add ").calls == 7);
  // Nothing compiled ran: an empty profile.
  CHECK(rune::profile([] { return nx::ones(nx::float64, {3}) * 2.; }).lines.empty());
}

TEST_CASE("rune::profile: an instruction that throws leaves the profiler sound") {
  auto failing = rune::jit([](const Tensor& x) {
    return rune::scan([](const Tensor& c, const Tensor& r) {
      auto guard = [](const Tensor& v) -> Tensor {
        if (nx::item(v) > 2.) throw std::invalid_argument("too far");
        return v;
      };
      return std::pair{c + rune::callback(guard, r, r), c};
    }, nx::scalar(nx::float64, 0.), x);
  });
  rune::detail::Profiling profiling;
  CHECK_THROWS_WITH(failing(test::f64({4}, {1, 2, 3, 4})), Catch::Contains("too far"));
  failing(test::f64({4}, {1, 2, 1, 2}));  // (the same key: the same code)
  const rune::Profile p = profiling.profile();
  const rune::ProfileLine& scan = line_with(p, "= scan 0");
  CHECK(scan.calls == 2);  // the one that threw counted too
  for (const rune::ProfileLine& line : p.lines) CHECK(line.seconds <= line.total_seconds + 1e-12);
}

TEST_CASE("a compiled call for the whole run's profile", "[.whole_run]") {  // (hidden: run by the next case)
  rows_of_kernels(nx::zeros(nx::float64, {1000}), nx::scalar(nx::float64, 0.5));
}

TEST_CASE("RUNE_PROFILE=1 prints every thread's profile at exit, on stderr") {
  const auto [status, text] = run_this_test("RUNE_PROFILE=1", "[.whole_run]");
  CHECK(status == 0);
  CHECK(text.find("rune profile (RUNE_PROFILE=1), every thread:\n") != std::string::npos);
  CHECK(text.find("= scan 0") != std::string::npos);
  CHECK(text.find("in 2 instructions\n") != std::string::npos);
}

namespace {
// The hunt on for a test's scope.
struct Hunting {
  Hunting() { rune::debug_nans(true); }
  ~Hunting() { rune::debug_nans(false); }
};
}  // namespace

TEST_CASE("debug_nans: an eager primitive making a NaN or an infinity from finite operands") {
  Hunting hunting;
  CHECK(rune::debugging_nans());
  CHECK_THROWS_AS(nx::log(test::f64({3}, {1, 0, 2})), std::runtime_error);
  CHECK_THROWS_WITH(nx::log(test::f64({3}, {1, 0, 2})),
                    "rune::debug_nans: nx::log at test_debugging.cpp:148 made -inf from finite operands (element 1 of its float64 [3] result)");
  CHECK_THROWS_WITH(nx::sqrt(test::f64({2}, {4, -1})),
                    "rune::debug_nans: nx::sqrt at test_debugging.cpp:150 made nan from finite operands (element 1 of its float64 [2] result)");
  CHECK_THROWS_WITH(test::f64({2}, {1e308, 1}) * 10.,
                    Catch::StartsWith("rune::debug_nans: nx::mul at test_debugging.cpp:152 made inf from finite operands (element 0"));
  // A NaN carried in is not made here; integers are always finite.
  CHECK(test::text(nx::exp(test::f64({2}, {NAN, 0}))) == "float64 [2] [nan, 1]");
  CHECK_NOTHROW(nx::create(nx::int32, {2}, {1, 2}) * 3.);
}

TEST_CASE("debug_nans: compiled code names the primitive, its element and the scan row or iterate trip") {
  Hunting hunting;
  auto flight = rune::jit([](const Tensor& x) {
    auto step = [](const Tensor& c, const Tensor& r) {
      Tensor n = nx::sqrt(c - r);  // (c - r: c0 - 1.56 row, below 0 from row 4 when c0 = 5)
      return std::pair{c - 1., n};
    };
    return rune::scan(step, x, nx::linspace(nx::float64, 0., 5., 10)).second;
  });
  CHECK_THROWS_WITH(flight(test::f64({2}, {5, 100})),
                    "rune::debug_nans: nx::sqrt (bytecode: call t2 = sqrt t1) at test_debugging.cpp:163 made nan from "
                    "finite operands (element 0 of its float64 [2] result), in row 4 of a scan");
  // The function stays usable: a flight that makes none runs.
  CHECK(flight(test::f64({2}, {100, 100})).shape() == nx::Shape{10, 2});
  // Nothing fused while hunting: each primitive its own instruction.
  CHECK(rune::bytecode(flight.program(test::f64({2}, {1, 1}))).find("= fused") == std::string::npos);
  auto halve = rune::jit([](const Tensor& x) {
    return rune::iterate(20, [](const Tensor& v) { return nx::less(v, nx::scalar(nx::float64, -1e300)); },
                         [](const Tensor& v) { return nx::log(v) - v; }, x);
  });
  CHECK_THROWS_WITH(halve(nx::scalar(nx::float64, 0.5)), Catch::EndsWith("in trip 1 of an iterate"));
}

TEST_CASE("debug_nans: a function compiled before the hunt names its fused kernel's primitives") {
  auto fused = rune::jit([](const Tensor& x) { return nx::sqrt(x * 2. - 1.); });
  const Tensor x = test::f64({4}, {1, 2, 3, 0});
  CHECK(test::text(fused(x)).find("nan") != std::string::npos);  // (not hunting: no error)
  Hunting hunting;
  CHECK_THROWS_WITH(fused(x), Catch::StartsWith("rune::debug_nans: a fused kernel of nx::mul, nx::sub, nx::sqrt "
                                                "(bytecode: fused t") &&
                                  Catch::EndsWith(" = fused 0) at test_debugging.cpp:183 made nan from finite operands "
                                                  "(element 3 of its float64 [4] result)"));
}

TEST_CASE("a compiled call for the hunt from the start", "[.hunt_from_start]") {  // (hidden: run by the next case)
  nx::log(test::f64({1}, {0}));
}

TEST_CASE("RUNE_DEBUG_NANS=1 hunts from the start") {
  const auto [status, text] = run_this_test("RUNE_DEBUG_NANS=1", "[.hunt_from_start]");
  CHECK(status != 0);
  CHECK(text.find("rune::debug_nans: nx::log at test_debugging.cpp:194 made -inf") != std::string::npos);
}

TEST_CASE("the profiler and the NaN hunt together: the hunt's error leaves the profile sound") {
  Hunting hunting;
  auto sink = rune::jit([](const Tensor& x) {
    auto step = [](const Tensor& c, const Tensor& r) { return std::pair{c - 1., nx::sqrt(c - r)}; };
    return rune::scan(step, x, nx::linspace(nx::float64, 0., 5., 10)).second;
  });
  rune::detail::Profiling profiling;
  CHECK_THROWS_WITH(sink(test::f64({2}, {5, 100})), Catch::EndsWith("in row 4 of a scan"));
  sink(test::f64({2}, {100, 100}));
  const rune::Profile p = profiling.profile();
  CHECK(line_with(p, "= scan 0").calls == 2);
  CHECK(line_with(p, " sqrt ").calls == 5 + 10);  // rows 0 to 4 of the first, every row of the second
  for (const rune::ProfileLine& line : p.lines) {
    CHECK(line.seconds <= line.total_seconds + 1e-12);
    CHECK(line.within < int(p.lines.size()));
  }
}

TEST_CASE("debug_nans: under rune::vmap the lane that made it is named") {
  Hunting hunting;
  const int line = __LINE__ + 1;
  auto f = [](const Tensor& x) { return nx::log(x) * 2.; };
  const Tensor xs = test::f64({3, 2}, {1, 2, 3, 4, 0, 5});
  const std::string made = "rune::debug_nans: nx::log at test_debugging.cpp:" + std::to_string(line) +
                           " made -inf from finite operands (element 0 of its float64 [2] result), in lane 2 of "
                           "rune::vmap";
  CHECK_THROWS_WITH(rune::vmap(f)(xs), made);
  // Nested maps: the lane of the outer one, the element in its value.
  CHECK_THROWS_WITH(rune::vmap(rune::vmap(f))(xs), made);
  // Finite lanes pass.
  CHECK(rune::vmap(f)(test::f64({2, 2}, {1, 2, 3, 4})).shape() == nx::Shape{2, 2});
}

TEST_CASE("debug_nans: compiled, the lane of the map is named where its batching rule ends in the primitive") {
  Hunting hunting;
  const std::string line = std::to_string(__LINE__ + 1);
  auto f = [](const Tensor& x) { return nx::log(x) * 2.; };
  const Tensor xs = test::f64({3, 2}, {1, 2, 3, 4, 5, 0});
  const std::string made = "rune::debug_nans: nx::log (bytecode: call t1 = log t0) at test_debugging.cpp:" + line +
                           " made -inf from finite operands (element 1 of its float64 [2] result), in lane 2 of "
                           "rune::vmap";
  CHECK_THROWS_WITH(rune::jit(rune::vmap(f))(xs), made);
  // Nested maps: the outermost's lane, the element in its value.
  CHECK_THROWS_WITH(rune::jit(rune::vmap(rune::vmap(f)))(xs), made);
  // A map inside a scan's step: the lane, then the row.
  auto rows = rune::jit([&](const Tensor& x) {
    auto step = [&](const Tensor& c, const Tensor& r) { return std::pair{c, rune::vmap(f)(c * r)}; };
    return rune::scan(step, x, test::f64({3}, {1, 1, 0})).second;
  });
  CHECK_THROWS_WITH(rows(test::f64({2, 2}, {1, 2, 3, 4})),
                    Catch::Contains(" at test_debugging.cpp:" + line) &&
                        Catch::EndsWith("(element 0 of its float64 [2] result), in lane 0 of rune::vmap, in row 2 of "
                                        "a scan"));
  // A compiled function called by a map runs eagerly under it, placed.
  CHECK_THROWS_WITH(rune::vmap(rune::jit(f))(xs), "rune::debug_nans: nx::log at test_debugging.cpp:" + line +
                                                      " made -inf from finite operands (element 1 of its float64 [2] "
                                                      "result), in lane 2 of rune::vmap");
  // A rule ending in another primitive notes no lane (a scatter-add with
  // per-lane indices adds into the lanes laid end to end, then moves them
  // back): the element of the whole value is named.
  auto add_twice = [](const Tensor& x, const Tensor& at) { return nx::scatter_add(nx::zeros_like(x), at, x); };
  CHECK_THROWS_WITH(rune::jit(rune::vmap(add_twice))(test::f64({2, 2}, {1, 2, 1e308, 1e308}),
                                                     nx::create(nx::int32, {2, 2}, {0, 1, 0, 0})),
                    Catch::StartsWith("rune::debug_nans: nx::scatter_add") &&
                        Catch::EndsWith("made inf from finite operands (element 2 of its float64 [4] result)"));
  // Finite lanes pass.
  CHECK(rune::jit(rune::vmap(f))(test::f64({2, 2}, {1, 2, 3, 4})).shape() == nx::Shape{2, 2});
}

TEST_CASE("debug_nans: a map's small values scalarized before the hunt began name their lane") {
  const std::string line = std::to_string(__LINE__ + 1);
  auto f = [](const Tensor& x) { return nx::log(x * 2.) + 1.; };
  auto flight = rune::jit([&](const Tensor& c, const Tensor& xs) {
    auto step = [&](const Tensor& v, const Tensor& x) {
      Tensor next = rune::vmap(f)(v) * x;
      return std::pair{next, next};
    };
    return rune::scan(step, c, xs).second;
  });
  const Tensor ones = test::f64({3}, {1, 1, 1});
  flight(test::f64({4}, {1, 2, 3, 4}), ones);  // (compiled with its carry as four scalars)
  Hunting hunting;
  // Lane 2: log(0.2) + 1 < 0 in row 0, so row 1 takes the log of a negative.
  CHECK_THROWS_WITH(flight(test::f64({4}, {1, 2, 0.1, 4}), ones),
                    Catch::StartsWith("rune::debug_nans: nx::log (bytecode: unary s") &&
                        Catch::EndsWith(" at test_debugging.cpp:" + line +
                                        " made nan from finite operands (element 0 of its float64 [] result), in lane "
                                        "2 of rune::vmap, in row 1 of a scan"));
}
