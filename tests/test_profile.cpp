// The profiler (rune::profile, RUNE_PROFILE=1): every instruction a
// compiled call runs, summed over its runs (a scan's step over its rows),
// its own time within its total, the bytes it wrote; only this thread's;
// an instruction that throws leaves the profiler sound.
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

// Lorenz-like: a scan of 50 rows over [1000] carries, each row one map kernel.
auto rows_of_kernels = rune::jit([](const Tensor& x, const Tensor& k) {
  auto step = [&](const Tensor& c, const Tensor& row) {
    Tensor next = nx::sin(c * k + row);
    return std::pair{next, nx::sum(next * next)};
  };
  return rune::scan(step, x, nx::ones(nx::float64, {50, 1000})).second;
});

}  // namespace

TEST_CASE("rune::profile: each instruction once a line, a scan's step summed over its rows") {
  const Tensor x = nx::zeros(nx::float64, {1000}), k = nx::scalar(nx::float64, 0.5);
  rune::Profile p = rune::profile(rows_of_kernels, x, k);
  const std::string bytecode = rune::bytecode(rows_of_kernels.program(x, k));
  REQUIRE(p.lines.size() == 2);
  const rune::ProfileLine& scan = line_with(p, "= scan 0");
  const rune::ProfileLine& kernel = line_with(p, "= map 0");
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
  const std::string log = std::filesystem::temp_directory_path() / ("rune_profile_" + std::to_string(::getpid()));
  const std::string command = "RUNE_PROFILE=1 /proc/" + std::to_string(::getpid()) +
                              "/exe '[.whole_run]' > /dev/null 2> " + log;
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(log);
  CHECK(text.find("rune profile (RUNE_PROFILE=1), every thread:\n") == 0);
  CHECK(text.find("= scan 0") != std::string::npos);
  CHECK(text.find("in 2 instructions\n") != std::string::npos);
}
