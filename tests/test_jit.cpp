// rune::jit: keys and retraces, captures, structures, donation, checks,
// composition with grad and scan, threads.
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>
#include <iostream>
#include <sstream>

#include "helpers.hpp"
#include "ir/text.hpp"
#include "vm/native/native.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

namespace {
Tensor v4() { return f64({4}, {1, 2, 3, 4}); }
enum class Mode { plain, doubled };
struct Config {
  Tensor scale;
  Mode mode = Mode::plain;
  int repeats = 1;
};
RUNE_TREE(Config, scale, mode, repeats);
}  // namespace

TEST_CASE("a compiled function traces once per key") {
  int traces = 0;
  auto affine = rune::jit([&](const Tensor& x) {
    ++traces;
    return x * 2. + 1.;
  });
  CHECK(text(affine(f64({3}, {1, 2, 3}))) == "float64 [3] [3, 5, 7]");
  CHECK(text(affine(f64({3}, {7, 8, 9}))) == "float64 [3] [15, 17, 19]");
  CHECK(traces == 1);
  (void)affine(nx::ones(nx::float64, {5}));   // a new shape
  (void)affine(nx::ones(nx::float32, {5}));   // a new dtype
  (void)affine(nx::ones(nx::float64, {3}));   // seen before
  CHECK(traces == 3);
  CHECK(affine.traces() == 3);
}

TEST_CASE("static leaves and structure are part of the key") {
  int traces = 0;
  auto run = rune::jit([&](const Config& c, const std::vector<Tensor>& xs) {
    ++traces;
    Tensor total = nx::zeros(nx::float64, {});
    for (const Tensor& x : xs) total = total + nx::sum(x);
    for (int i = 0; i < c.repeats; ++i) total = total * c.scale;
    return c.mode == Mode::doubled ? total * 2. : total;
  });
  Config c{nx::scalar(nx::float64, 2.), Mode::plain, 1};
  std::vector<Tensor> xs{v4()};
  CHECK(nx::item(run(c, xs)) == 20);
  c.repeats = 2;
  CHECK(nx::item(run(c, xs)) == 40);
  c.mode = Mode::doubled;
  CHECK(nx::item(run(c, xs)) == 80);
  xs.push_back(v4());
  CHECK(nx::item(run(c, xs)) == 160);
  CHECK(traces == 4);
  CHECK(nx::item(run(c, xs)) == 160);
  CHECK(traces == 4);
}

TEST_CASE("RUNE_JIT_DEBUG reports the first difference of a retrace") {
  setenv("RUNE_JIT_DEBUG", "1", 1);
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  auto f = rune::jit([](const Tensor& x) { return x + 1.; });
  (void)f(nx::ones(nx::float64, {3}));
  (void)f(nx::ones(nx::float64, {5}));
  std::cerr.rdbuf(old);
  unsetenv("RUNE_JIT_DEBUG");
  CHECK(captured.str() == "rune::jit: retrace: 0: shape [5] here, [3] in the previous key\n");
  captured.str("");
  setenv("RUNE_JIT_DEBUG", "1", 1);
  old = std::cerr.rdbuf(captured.rdbuf());
  Tensor m = nx::reshape(nx::arange(nx::float64, 0, 6), {2, 3});
  auto g = rune::jit([](const Tensor& x) { return x * 2.; });
  CHECK(text(g(m)) == "float64 [2, 3] [[0, 2, 4], [6, 8, 10]]");
  CHECK(text(g(nx::transpose(nx::transpose(m)))) == "float64 [2, 3] [[0, 2, 4], [6, 8, 10]]");  // a view, same layout
  CHECK(text(g(nx::transpose(nx::reshape(m, {3, 2})))) == "float64 [2, 3] [[0, 4, 8], [2, 6, 10]]");
  CHECK(g.traces() == 2);  // a strided view is another layout
  std::cerr.rdbuf(old);
  unsetenv("RUNE_JIT_DEBUG");
  CHECK(captured.str() == "rune::jit: retrace: 0: layout strided here, contiguous in the previous key\n");
}

namespace {
struct Spring {
  Tensor position;
  float stiffness = 1.f;  // a static leaf: part of the key by its value
};
RUNE_TREE(Spring, position, stiffness);
}  // namespace

TEST_CASE("float and double leaves are static: keyed by their bits, never traced") {
  int traces = 0;
  auto pull = rune::jit([&](const Spring& s, double scale) {
    ++traces;
    return s.position * double(s.stiffness) * scale;
  });
  CHECK(text(pull(Spring{v4(), 2.f}, 0.5)) == "float64 [4] [1, 2, 3, 4]");
  CHECK(text(pull(Spring{v4(), 2.f}, 0.5)) == "float64 [4] [1, 2, 3, 4]");
  CHECK(traces == 1);
  CHECK(text(pull(Spring{v4(), 3.f}, 0.5)) == "float64 [4] [1.5, 3, 4.5, 6]");
  CHECK(traces == 2);
  (void)pull(Spring{v4(), 3.f}, -0.);
  (void)pull(Spring{v4(), 3.f}, 0.);
  CHECK(traces == 4);  // -0 and 0 are distinct keys
  const auto key = rune::key_of(std::pair{Spring{v4(), 2.f}, 0.1});
  CHECK(*rune::first_difference(key, rune::key_of(std::pair{Spring{v4(), 2.f}, 0.3}), "here", "there") ==
        "1: value 0.1 here, 0.3 there");
}

TEST_CASE("a function traced on 8 calls in a row warns once, naming the static leaf that keeps changing") {
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  auto f = rune::jit([](const Tensor& x, int frame) { return x * double(frame); });
  for (int frame = 0; frame < 7; ++frame) (void)f(v4(), frame);
  const std::string after_seven = captured.str();
  for (int frame = 7; frame < 20; ++frame) (void)f(v4(), frame);
  std::cerr.rdbuf(old);
  CHECK(after_seven.empty());
  CHECK(captured.str() ==
        "rune::jit: warning: traced again on each of the last 8 calls; the static leaf 1 keeps changing (value 7 here, "
        "6 in the previous key): a value that changes from call to call belongs in a tensor (nx::scalar) "
        "(RUNE_JIT_DEBUG=1 reports every retrace)\n");
  // A call that finds its program breaks the run.
  captured.str("");
  old = std::cerr.rdbuf(captured.rdbuf());
  auto g = rune::jit([](const Tensor& x, int frame) { return x * double(frame); });
  for (int frame = 0; frame < 20; ++frame) (void)g(v4(), frame % 2 == 0 ? frame : 0);
  std::cerr.rdbuf(old);
  CHECK(captured.str().empty());
}

TEST_CASE("captures are read at the trace") {
  double scale = 2.;
  auto scaled = rune::jit([&](const Tensor& v) { return v * scale; });
  Tensor before = scaled(v4());
  scale = 10.;
  CHECK(text(scaled(v4())) == text(before));
}

TEST_CASE("reading a stand-in inside a compiled function names rune::jit") {
  auto f = rune::jit([](const Tensor& v) { return v * nx::item(v, {0}); });
  CHECK_THROWS_WITH(f(v4()), "nx::item: the value is traced by rune::jit");
  // a failed trace leaves the compiled function usable
  auto g = rune::jit([](const Tensor& v) {
    if (v.shape()[0] == 2) (void)nx::item(v, {0});
    return v + 1.;
  });
  CHECK_THROWS(g(f64({2}, {1, 2})));
  CHECK(text(g(f64({3}, {1, 2, 3}))) == "float64 [3] [2, 3, 4]");
}

TEST_CASE("compiled arithmetic gives eager's bits") {
  auto poly = [](const Tensor& x) { return x * x * x - x * 3. + x / 7.; };
  Tensor probe = f64({3}, {0.1, 1.7, -2.3});
  std::vector<double> a = values(rune::jit(poly)(probe)), b = values(poly(probe));
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(bits(a[i]) == bits(b[i]));
}

TEST_CASE("pads whose fills differ only in their sign bit are not merged as common subexpressions") {
  auto pads = [](const Tensor& x) {
    return std::pair{nx::pad(x, {{1, 0}}, 0.), nx::pad(x, {{1, 0}}, -0.)};
  };
  auto [plus, minus] = rune::jit(pads)(v4());
  CHECK(bits(values(plus)[0]) == bits(0.));
  CHECK(bits(values(minus)[0]) == bits(-0.));
}

TEST_CASE("donation gives the storage up; results equal a call without it") {
  auto decay = rune::jit([](const Tensor& w) { return w * 0.5; });
  Tensor w = f64({3}, {2, 4, 6});
  Tensor view = nx::slice(w, {1}, {3});
  Tensor kept = decay(w);
  Tensor w2 = decay(nx::donate(w));
  CHECK(values(w2) == values(kept));
  CHECK_THROWS_WITH(nx::to_vector<double>(w), "nx::to_vector: float64 [3] was donated to rune::jit");
  CHECK_THROWS_WITH(nx::item(view, {0}), "nx::item: float64 [2] was donated to rune::jit");
  CHECK_THROWS_WITH(w + 1., test::Placed("nx::add: float64 [3] was donated to rune::jit"));
  // a result that is the donated value itself is copied out first
  auto same = rune::jit([](const Tensor& x) { return x; });
  Tensor y = f64({2}, {1, 2});
  Tensor z = same(nx::donate(y));
  CHECK(text(z) == "float64 [2] [1, 2]");
  // outside a compiled call, donate changes nothing
  Tensor u = f64({1}, {3});
  CHECK(text(nx::donate(u) * 2.) == "float64 [1] [6]");
  CHECK(text(u) == "float64 [1] [3]");
}

TEST_CASE("checks: eager, traced, compiled") {
  auto make = [](const nx::Index& i, const Tensor& x) {
    return std::make_exception_ptr(
        std::runtime_error("bad element at " + std::to_string(i[0]) + ": " + nx::to_string(x)));
  };
  Tensor x = f64({3}, {1, -1, 0});
  CHECK_THROWS_WITH(nx::check(nx::greater(x, 0.), x, make), "bad element at 1: float64 [] -1");
  CHECK_NOTHROW(nx::check(nx::greater(nx::abs(x), -1.), x, make));
  CHECK_THROWS_WITH(nx::check(x, x, make), "nx::check: the condition must be a bool tensor, got float64 [3]");
  auto checked_log = rune::jit([&](const Tensor& v) {
    nx::check(nx::greater(v, 0.), v, make);
    return nx::log(v);
  });
  CHECK_THROWS_WITH(checked_log(x), "bad element at 1: float64 [] -1");
  CHECK(text(checked_log(f64({2}, {1, 1}))) == "float64 [2] [0, 0]");
  // the check survives the passes, though nothing uses it
  rune::Program p = rune::program([&](const Tensor& v) {
    nx::check(nx::greater(v, 0.), v, make);
    return v;
  }, v4());
  CHECK(rune::to_string(p).find("check 1 conditions") != std::string::npos);
  CHECK_THROWS_WITH(rune::save_program(p, "/tmp/never.rune"), StartsWith("rune::save_program: the program holds C++ code"));
}

TEST_CASE("jit composes with grad and scan") {
  using Params = std::pair<Tensor, Tensor>;
  Tensor inputs = f64({4}, {0, 1, 2, 3}), targets = f64({4}, {1, 3, 5, 7});
  auto mse = [&](const Params& p) {
    Tensor err = p.first * inputs + p.second - targets;
    return nx::mean(err * err);
  };
  int traces = 0;
  auto step = rune::jit([&](const Params& p) {
    ++traces;
    auto [loss, g] = rune::value_and_grad(mse, p);
    return std::pair{loss, Params{p.first - g.first * 0.1, p.second - g.second * 0.1}};
  });
  Params p{nx::scalar(nx::float64, 0.), nx::scalar(nx::float64, 0.)};
  Tensor loss;
  for (int i = 0; i < 200; ++i) std::tie(loss, p) = step(p);
  CHECK(nx::item(loss) < 1e-12);
  CHECK(traces == 1);
  // grad of a compiled function differentiates its program
  auto compiled = rune::jit([](const Tensor& v) { return nx::sum(nx::sin(v) * v); });
  CHECK(text(rune::grad(compiled, v4())) == text(rune::grad([](const Tensor& v) { return nx::sum(nx::sin(v) * v); }, v4())));
  // a compiled scan
  auto cumulative = rune::jit([](const Tensor& v) {
    return rune::scan([](const Tensor& acc, const Tensor& row) { return std::pair{acc + row, acc + row}; },
                      nx::scalar(nx::float64, 0.), v)
        .second;
  });
  CHECK(text(cumulative(v4())) == "float64 [4] [1, 3, 6, 10]");
}

TEST_CASE("a compiled function may be called from several threads at once") {
  auto f = rune::jit([](const Tensor& v) { return nx::sum(v * v); });
  std::vector<double> results(8);
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k)
    threads.emplace_back([&, k] { results[std::size_t(k)] = nx::item(f(nx::full(nx::float64, {k + 1}, 2.))); });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 8; ++k) CHECK(results[std::size_t(k)] == 4. * (k + 1));
  CHECK(f.traces() == 8);
}

TEST_CASE("callbacks run on concrete values: once per execution, never at the trace") {
  int runs = 0;
  auto host = [&](const Tensor& x) {
    ++runs;
    return x * nx::item(nx::sum(x));  // reads elements: C++ on concrete values
  };
  Tensor x = f64({2}, {1, 2});
  CHECK(text(rune::callback(host, x, x)) == "float64 [2] [3, 6]");
  CHECK(runs == 1);
  auto compiled = rune::jit([&](const Tensor& v) { return rune::callback(host, v, v * 2.) + 1.; });
  runs = 0;
  (void)compiled(x);
  (void)compiled(x);
  CHECK(runs == 2);
  CHECK(text(compiled(x)) == "float64 [2] [13, 25]");
  rune::Program p = rune::program([&](const Tensor& v) { return rune::callback(host, v, v); }, x);
  CHECK(rune::to_string(p).find("callback(%0)") != std::string::npos);
  CHECK_THROWS_WITH(rune::save_program(p, "/tmp/never.rune"), StartsWith("rune::save_program: the program holds C++ code"));
  CHECK_THROWS_WITH(rune::grad([&](const Tensor& v) { return nx::sum(rune::callback(host, v, v)); }, x),
                    "rune::grad: rune::callback has no derivative; give the function a custom_jvp or custom_vjp rule");
  // A loop whose outputs nothing reads still runs the callback in its step.
  auto unused_loop = rune::jit([&](const Tensor& v) {
    (void)rune::scan([&](const Tensor& c, const Tensor& row) { return std::pair{rune::callback(host, c, c) + row, c}; },
                     v, f64({3, 2}, {1, 2, 3, 4, 5, 6}));
    return v;
  });
  runs = 0;
  (void)unused_loop(x);
  CHECK(runs == 3);
  auto wrong = [](const Tensor& v) { return nx::concatenate({v, v}); };
  CHECK_THROWS_WITH(rune::callback(wrong, x, x),
                    "rune::callback: the root: shape [4] in what the callback returned, [2] in like");
}

TEST_CASE("a program evaluated inside a trace is staged again, constructs included") {
  rune::Program inner = rune::program(
      [](const Tensor& v) {
        return rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{c + row, c}; },
                          nx::scalar(nx::float64, 0.), v)
            .first;
      },
      v4());
  rune::Program outer = rune::program([&](const Tensor& v) { return rune::run(inner, {v * 2.})[0]; }, v4());
  CHECK(text(rune::run(outer, {v4()})[0]) == "float64 [] 20");
  rune::ir::Program const& ir = outer.ir();
  CHECK(rune::ir::print(ir).find("scan 4 rows") != std::string::npos);
}

TEST_CASE("a custom_vjp with callbacks inside a scan, under grad and jit (seed page Callbacks)") {
  int solves = 0, adjoints = 0;
  auto solve = [&](const Tensor& theta) {
    ++solves;
    double t = nx::item(theta);
    return nx::scalar(nx::float64, 1. / (t * t + 1.));
  };
  auto adjoint = [&](const Tensor& theta, const Tensor& u, const Tensor& ct) {
    ++adjoints;
    double t = nx::item(theta);
    return nx::scalar(nx::float64, -2. * t * nx::item(u) * nx::item(ct) / (t * t + 1.));
  };
  auto state = rune::custom_vjp([&](const Tensor& theta) {
    Tensor u = rune::callback(solve, theta, theta);
    return std::pair{u, [&adjoint, theta, u](const Tensor& ct) { return rune::callback(adjoint, theta, theta, u, ct); }};
  });
  auto loss = [&](const Tensor& thetas) {
    return rune::scan([&](const Tensor& acc, const Tensor& theta) { return std::pair{acc + state(theta), theta}; },
                      nx::scalar(nx::float64, 0.), thetas)
        .first;
  };
  Tensor thetas = f64({3}, {-1, 0.5, 2});
  Tensor g = rune::grad(loss, thetas);
  CHECK(solves == 3);
  CHECK(adjoints == 3);
  std::vector<double> gs = values(g);
  for (int i = 0; i < 3; ++i) {
    double t = nx::item(thetas, {i});
    CHECK(gs[std::size_t(i)] == Approx(-2. * t / ((t * t + 1.) * (t * t + 1.))).epsilon(1e-12));
  }
  solves = adjoints = 0;
  auto step = rune::jit([&](const Tensor& th) { return rune::grad(loss, th); });
  (void)step(thetas);
  (void)step(thetas);
  CHECK(solves == 6);
  CHECK(adjoints == 6);
}

TEST_CASE("the maps around a call are part of its key: lane counts and named axes (issue 25)") {
  // A compiled gather over a named map's lanes, called in maps of 2 lanes
  // then 3, traces once per lane count (it reused the 2-lane program).
  rune::Axis rows = rune::axis();
  auto centered = rune::jit([rows](const Tensor& r) { return r - nx::mean(rune::lanes(rows, r), {0}); });
  auto mapped = rune::vmap([&](const Tensor& r) { return centered(r); }, rows);
  CHECK(text(mapped(f64({2}, {1, 3}))) == "float64 [2] [-1, 1]");
  CHECK(text(mapped(f64({3}, {1, 3, 8}))) == "float64 [3] [-3, -1, 4]");
  CHECK(text(mapped(f64({2}, {5, 9}))) == "float64 [2] [-2, 2]");
  CHECK(centered.traces() == 2);
  // A sibling: rune::lane_count read at the trace is a constant of the program.
  auto scaled = rune::jit([](const Tensor& r) { return r * double(rune::lane_count()); });
  auto each = rune::vmap([&](const Tensor& r) { return scaled(r); });
  CHECK(text(each(f64({2}, {1, 1}))) == "float64 [2] [2, 2]");
  CHECK(text(each(f64({3}, {1, 1, 1}))) == "float64 [3] [3, 3, 3]");
  CHECK(text(scaled(f64({1}, {1}))) == "float64 [1] [1]");  // outside any map: one lane
  // Another named map of the same count: its axis is another name. (The
  // function gathers over whichever of the two maps runs around it.)
  rune::Axis other = rune::axis();
  auto running = [&] { return rune::lane_count(rows) > 1 ? rows : other; };
  auto gathered = rune::jit([&](const Tensor& r) { return nx::sum(rune::lanes(running(), r)); });
  (void)rune::vmap([&](const Tensor& r) { return gathered(r); }, rows)(f64({2}, {1, 2}));
  CHECK(text(rune::vmap([&](const Tensor& r) { return gathered(r); }, other)(f64({2}, {1, 2}))) ==
        "float64 [2] [3, 3]");
  CHECK(gathered.traces() == 2);
  // RUNE_JIT_DEBUG names the maps when they are the difference.
  setenv("RUNE_JIT_DEBUG", "1", 1);
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  (void)mapped(f64({4}, {1, 2, 3, 4}));
  std::cerr.rdbuf(old);
  unsetenv("RUNE_JIT_DEBUG");
  CHECK(captured.str() == "rune::jit: retrace: the maps around the call: [4 lanes of axis " + std::to_string(rows.id) +
                              "] here, [2 lanes of axis " + std::to_string(rows.id) + "] in the previous key\n");
}

TEST_CASE("a program traced in a map runs only in a map of its axis and lane count (issue 25)") {
  rune::Axis rows = rune::axis();
  auto centered = rune::jit([rows](const Tensor& r) { return r - nx::mean(rune::lanes(rows, r), {0}); });
  rune::Program p;
  (void)rune::vmap([&](const Tensor& r) {
    p = centered.program(r);
    return r;
  }, rows)(f64({2, 2}, {1, 2, 3, 4}));
  auto run_in = [&](const Tensor& x) { return rune::vmap([&](const Tensor& r) { return rune::run(p, {r})[0]; }, rows)(x); };
  CHECK(text(run_in(f64({2, 2}, {1, 2, 3, 4}))) == "float64 [2, 2] [[-1, -1], [1, 1]]");
  CHECK_THROWS_WITH(run_in(f64({3, 2}, {1, 2, 3, 4, 5, 6})),
                    "rune::lanes: the program was traced in a map of 2 lanes; this map has 3");
  // Outside any map: the user's mistake, not an internal error.
  CHECK_THROWS_AS(rune::run(p, {f64({2}, {1, 2})}), std::invalid_argument);
  CHECK_THROWS_WITH(rune::run(p, {f64({2}, {1, 2})}),
                    "rune::lanes: no map of this axis is running (name one with rune::vmap(f, axis))");
  // Text cannot name the map: saving refuses it.
  CHECK_THROWS_WITH(rune::save_program(p, "/tmp/never.rune"),
                    StartsWith("rune::save_program: the program gathers over the lanes of a named map"));
}

TEST_CASE("the cache keeps the most recently used programs, at most JitOptions::cache_size (issue 25)") {
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  auto scaled = rune::jit([](const Tensor& x, int k) { return x * double(k); }, rune::JitOptions{.cache_size = 4});
  for (int k = 0; k < 100; ++k) CHECK(nx::item(scaled(nx::scalar(nx::float64, 2.), k)) == 2. * k);
  CHECK(scaled.cached() == 4);
  CHECK(scaled.traces() == 100);
  CHECK(nx::item(scaled(nx::scalar(nx::float64, 1.), 99)) == 99.);  // still cached
  CHECK(nx::item(scaled(nx::scalar(nx::float64, 1.), 96)) == 96.);
  CHECK(scaled.traces() == 100);
  CHECK(nx::item(scaled(nx::scalar(nx::float64, 1.), 3)) == 3.);  // dropped: traced again
  CHECK(scaled.traces() == 101);
  CHECK(scaled.cached() == 4);
  // 99 and 96 were used after 97 and 98: 97, the least recently used, went.
  CHECK(nx::item(scaled(nx::scalar(nx::float64, 1.), 98)) == 98.);
  CHECK(nx::item(scaled(nx::scalar(nx::float64, 1.), 99)) == 99.);
  CHECK(scaled.traces() == 101);
  CHECK(nx::item(scaled(nx::scalar(nx::float64, 1.), 97)) == 97.);
  CHECK(scaled.traces() == 102);
  // The default bound, with tensor keys (the fast path's).
  auto summed = rune::jit([](const Tensor& x) { return nx::sum(x); });
  for (int n = 1; n <= 200; ++n) CHECK(nx::item(summed(nx::ones(nx::float64, {n}))) == n);
  CHECK(summed.cached() == rune::JitOptions{}.cache_size);
  CHECK(nx::item(summed(nx::ones(nx::float64, {1}))) == 1.);
  CHECK(summed.traces() == 201);
  std::cerr.rdbuf(old);
  CHECK_THROWS_WITH(rune::jit([](const Tensor& x) { return x; }, rune::JitOptions{.cache_size = 0}),
                    "rune::jit: cache_size = 0 keeps no program; give 1 or more");
}

#if !defined(__SANITIZE_ADDRESS__)  // (its quarantine keeps freed memory)
namespace {
long resident_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
// The process's executable mappings of no file: the machine-code tier's
// pages (qemu-user lists the emulated process's own).
long code_mappings() {
  std::ifstream maps("/proc/self/maps");
  long n = 0;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    n += perms.size() > 2 && perms[2] == 'x' && path.empty();
  }
  return n;
}
}  // namespace

TEST_CASE("a static leaf that changes on every call holds memory flat (issue 25)") {
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  auto f = rune::jit([](const Tensor& x, int frame) { return x * double(frame) + 1.; });
  const Tensor x = nx::ones(nx::float64, {4});
  for (int frame = 0; frame < 1000; ++frame) (void)f(x, frame);
  const long before = resident_kb(), code_before = code_mappings();
  for (int frame = 1000; frame < 6000; ++frame) (void)f(x, frame);
  const long after = resident_kb(), code_after = code_mappings();
  std::cerr.rdbuf(old);
  CHECK(f.cached() == rune::JitOptions{}.cache_size);
  // (each program promoted under RUNE_NATIVE=eager: its code freed with it)
  CHECK(code_after - code_before < 64);
  // Keeping every program grew it by ~7 kB a call: 35 MB here. (Under an
  // emulator each new loop's translation grows the emulator's own memory.)
  const char* emulator = std::getenv("MESON_EXE_WRAPPER");
  if (emulator && *emulator && rune::vm::native::mode() == rune::vm::native::Mode::eager)
    WARN("resident memory not checked: " << emulator << " translates each program's new machine code");
  else
    CHECK(after - before < 4000);
}
#endif

TEST_CASE("a program the cache drops while another thread runs it stays alive for that run (issue 25)") {
  std::mutex m;
  std::condition_variable cv;
  bool running = false, release = false, hold = false;
  auto wait_once = [&](const Tensor& x) {
    std::unique_lock lock(m);
    if (hold) {
      running = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    }
    return x;
  };
  auto f = rune::jit([&](const Tensor& x) { return rune::callback(wait_once, x, x * 3.) + 1.; },
                     rune::JitOptions{.cache_size = 1});
  CHECK(text(f(f64({2}, {1, 2}))) == "float64 [2] [4, 7]");
  hold = true;
  Tensor held;
  std::thread first([&] { held = f(f64({2}, {2, 3})); });  // the fast path's program, held in the callback
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return running; });
    hold = false;
  }
  for (int n = 1; n <= 5; ++n) CHECK(nx::item(nx::sum(f(nx::ones(nx::float64, {n})))) == 4. * n);  // drops it
  CHECK(f.cached() == 1);
  {
    std::lock_guard lock(m);
    release = true;
  }
  cv.notify_all();
  first.join();
  CHECK(text(held) == "float64 [2] [7, 10]");
}

// ---- The passes: loop invariants hoisted, constants folded (issue 26) ----

namespace {
// Whether a program holds an equation of primitive `p` (not looking into
// sub-programs), and the first equation of a kind.
bool holds(const rune::ir::Program& p, nx::ops::Prim prim) {
  for (const rune::ir::Equation& eq : p.equations)
    if (eq.kind == rune::ir::OpKind::primitive && eq.prim == prim) return true;
  return false;
}
const rune::ir::Equation& first_of(const rune::ir::Program& p, rune::ir::OpKind kind) {
  for (const rune::ir::Equation& eq : p.equations)
    if (eq.kind == kind) return eq;
  FAIL("no equation of that kind");
  return p.equations.front();
}
std::size_t position_of(const rune::ir::Program& p, nx::ops::Prim prim) {
  for (std::size_t i = 0; i < p.equations.size(); ++i)
    if (p.equations[i].kind == rune::ir::OpKind::primitive && p.equations[i].prim == prim) return i;
  return p.equations.size();
}
std::size_t position_of(const rune::ir::Program& p, rune::ir::OpKind kind) {
  for (std::size_t i = 0; i < p.equations.size(); ++i)
    if (p.equations[i].kind == kind) return i;
  return p.equations.size();
}

// The step of an example loop: exp(c) * 2 and cast(ids) depend only on its
// captures.
std::pair<Tensor, Tensor> scaled_step(const Tensor& acc, const Tensor& row, const Tensor& c, const Tensor& ids) {
  Tensor next = acc * (nx::exp(c) * 2.) + row + nx::cast(ids, nx::float64);
  return {next, nx::sum(next)};
}
}  // namespace

TEST_CASE("a scan step's values of its captures alone are computed once, before the loop") {
  using nx::ops::Prim;
  auto f = [](const Tensor& xs, const Tensor& c, const Tensor& ids) {
    return rune::scan([&](const Tensor& acc, const Tensor& row) { return scaled_step(acc, row, c, ids); },
                      nx::zeros(nx::float64, {3}), xs);
  };
  const Tensor xs = nx::reshape(nx::arange(nx::float64, 0, 15) * 0.37, {5, 3});
  const Tensor c = f64({3}, {0.5, -1.25, 2}), ids = nx::create(nx::int32, {3}, {4, -7, 9});
  auto compiled = rune::jit(f);
  const rune::Program program = compiled.program(xs, c, ids);
  const rune::ir::Program& p = program.ir();
  const rune::ir::Program& step = *first_of(p, rune::ir::OpKind::scan).programs[0];
  CHECK_FALSE(holds(step, Prim::exp));
  CHECK_FALSE(holds(step, Prim::convert));
  CHECK(position_of(p, Prim::exp) < position_of(p, rune::ir::OpKind::scan));
  CHECK(position_of(p, Prim::convert) < position_of(p, rune::ir::OpKind::scan));
  // the bytecode computes them before the scan instruction, and lists them so
  const std::string listing = rune::bytecode(program);
  INFO(listing);
  CHECK(listing.find("; hoisted from scan 0") < listing.find("= scan 0"));
  CHECK(listing.find("scan 0: 5 rows") != std::string::npos);
  // the bits of eager and of the program without the passes
  const auto eager = f(xs, c, ids);
  const std::vector<Tensor> unsimplified = rune::run(rune::program(f, xs, c, ids), {xs, c, ids});
  const auto got = compiled(xs, c, ids);
  CHECK(same_bits(got.first, eager.first));
  CHECK(same_bits(got.second, eager.second));
  CHECK(same_bits(got.first, unsimplified[0]));
  CHECK(same_bits(got.second, unsimplified[1]));
  // its derivative and its batched form read the new captures as any others
  auto loss = [&](auto&& g) { return [g, xs, ids](const Tensor& cc) { return nx::sum(g(xs, cc, ids).first); }; };
  // (a derivative through a compiled call differentiates its loops as traced, before hoisting: eager's bits)
  CHECK(same_bits(rune::grad(loss(compiled))(c), rune::grad(loss(f))(c)));
  CHECK(same_bits(rune::jit(rune::grad(loss(compiled)))(c), rune::grad(loss(f))(c)));
  const Tensor cs = nx::stack({c, c * 0.5});
  auto one_c = [&](auto&& g) { return [g, xs, ids](const Tensor& cc) { return g(xs, cc, ids).second; }; };
  CHECK(same_bits(rune::vmap(one_c(compiled))(cs), rune::vmap(one_c(f))(cs)));
}

TEST_CASE("a scan of no rows still gives its results with what it hoisted computed before it") {
  auto f = [](const Tensor& c, const Tensor& ids) {
    return rune::scan([&](const Tensor& acc) { return scaled_step(acc, acc, c, ids); }, nx::ones(nx::float64, {3}),
                      std::int64_t(0));
  };
  const Tensor c = f64({3}, {0.5, -1.25, 2}), ids = nx::create(nx::int32, {3}, {4, -7, 9});
  auto compiled = rune::jit(f);
  CHECK_FALSE(holds(*first_of(compiled.program(c, ids).ir(), rune::ir::OpKind::scan).programs[0], nx::ops::Prim::exp));
  const auto got = compiled(c, ids), eager = f(c, ids);
  CHECK(same_bits(got.first, eager.first));
  CHECK(text(got.second) == "float64 [0] []");
}

TEST_CASE("an iterate's until and step hoist their invariants as until's and the step's captures") {
  using nx::ops::Prim;
  // (d stays a capture of the step: until's new captures come before it)
  auto f = [](const Tensor& x, const Tensor& c, const Tensor& d) {
    return rune::iterate(
        100, [&](const Tensor& v) { return nx::greater(nx::sum(v), nx::sum(nx::exp(c))); },
        [&](const Tensor& v) { return v + nx::sqrt(c) * 0.5 + v * d; }, x);
  };
  const Tensor x = f64({3}, {0, 0.25, -1}), c = f64({3}, {1.5, 0.75, 2.25}), d = f64({3}, {0.125, 0.5, 0.25});
  auto compiled = rune::jit(f);
  const rune::Program program = compiled.program(x, c, d);
  const rune::ir::Equation& loop = first_of(program.ir(), rune::ir::OpKind::iterate);
  CHECK_FALSE(holds(*loop.programs[0], Prim::exp));
  CHECK_FALSE(holds(*loop.programs[1], Prim::sqrt));
  CHECK(holds(program.ir(), Prim::exp));
  CHECK(holds(program.ir(), Prim::sqrt));
  const std::string listing = rune::bytecode(program);
  INFO(listing);
  CHECK(listing.find("; hoisted from invoke 0") < listing.find("= invoke 0"));
  const std::vector<Tensor> unsimplified = rune::run(rune::program(f, x, c, d), {x, c, d});
  CHECK(same_bits(compiled(x, c, d), f(x, c, d)));
  CHECK(same_bits(compiled(x, c, d), unsimplified[0]));
}

TEST_CASE("a large elementwise invariant stays in its loop when the loop reads its operand anyway") {
  // W5's until: |x * x - a| < a * 1e-12. Over 2^17 lanes, reading a * 1e-12
  // each trip costs more than computing it beside the a it reads; over 100
  // lanes it moves out (rune/ir/passes/hoist.hpp)
  auto f = [](const Tensor& a) {
    return rune::iterate(
        100, [a](const Tensor& x) { return nx::all(nx::less(nx::abs(x * x - a), a * 1e-12)); },
        [a](const Tensor& x) { return (x + a / x) * 0.5; }, a);
  };
  for (std::int64_t n : {std::int64_t(100), std::int64_t(1) << 17}) {
    INFO(n << " lanes");
    const Tensor a = nx::linspace(nx::float64, 0.5, 100., n);
    auto compiled = rune::jit(f);
    const rune::Program program = compiled.program(a);
    const std::string listing = rune::bytecode(program);
    INFO(listing);
    CHECK((listing.find("; hoisted from invoke 0") != std::string::npos) == (n == 100));
    CHECK(same_bits(compiled(a), f(a)));
  }
}

TEST_CASE("small values between large ones move before them, so the large ones meet in one kernel") {
  // head * 3 (2 elements) came between x * 2 and the add, closing the kernel of x's shape
  auto f = [](const Tensor& x) {
    const Tensor doubled = x * 2.;
    const Tensor head = nx::slice(x, {0}, {2}) * 3.;
    return doubled + nx::sum(head) + nx::exp(x);
  };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 4096);
  auto compiled = rune::jit(f);
  const rune::Program program = compiled.program(x);
  const std::string listing = rune::bytecode(program);
  INFO(listing);
  CHECK(position_of(program.ir(), nx::ops::Prim::reduce_sum) < position_of(program.ir(), nx::ops::Prim::exp));
  std::size_t kernels = 0;
  for (std::size_t at = listing.find("= fused "); at != std::string::npos; at = listing.find("= fused ", at + 1)) ++kernels;
  CHECK(kernels == 2);  // (head * 3, then everything of x's shape)
  CHECK(same_bits(compiled(x), f(x)));
}

TEST_CASE("a value of one reader sinks to it, so a tree's leaves computed in turn meet their users in one kernel") {
  // map_leaves computes every leaf's halving before the updates read them:
  // w's halving, then b's (another shape) closed w's kernel, the halving of
  // w a pass of its own
  auto f = [](const Tensor& w, const Tensor& b, const Tensor& gw, const Tensor& gb) {
    const std::vector<Tensor> halves = {gw / 2., gb / 2.};
    return std::pair{w - 0.01 * halves[0], b - 0.01 * halves[1]};
  };
  const Tensor w = nx::linspace(nx::float32, -1., 1., 4096), b = nx::linspace(nx::float32, 0., 1., 256);
  auto compiled = rune::jit(f);
  const rune::Program program = compiled.program(w, b, w * 3., b * 5.);
  const std::string listing = rune::bytecode(program);
  INFO(listing);
  CHECK(listing.find("call ") == std::string::npos);  // (every division in its update's kernel)
  std::size_t kernels = 0;
  for (std::size_t at = listing.find("= fused "); at != std::string::npos; at = listing.find("= fused ", at + 1)) ++kernels;
  CHECK(kernels == 2);
  const auto got = compiled(w, b, w * 3., b * 5.), eager = f(w, b, w * 3., b * 5.);
  CHECK(same_bits(got.first, eager.first));
  CHECK(same_bits(got.second, eager.second));
}

TEST_CASE("nested scans: an inner step's invariants move out as far as they are invariant") {
  using nx::ops::Prim;
  auto f = [](const Tensor& xs, const Tensor& c) {
    return rune::scan(
        [&](const Tensor& acc, const Tensor& row) {
          Tensor inner = rune::scan([&](const Tensor& a) {
                           // exp(c): the function's; sin(row): the outer row's
                           Tensor next = a * nx::exp(c) + nx::sin(row);
                           return std::pair{next, next};
                         }, acc, std::int64_t(3)).first;
          return std::pair{inner, nx::sum(inner)};
        },
        nx::zeros(nx::float64, {2}), xs);
  };
  const Tensor xs = nx::reshape(nx::arange(nx::float64, 0, 8) * 0.125, {4, 2}), c = f64({2}, {-0.5, 0.25});
  auto compiled = rune::jit(f);
  const rune::Program program = compiled.program(xs, c);
  const rune::ir::Program& p = program.ir();
  const rune::ir::Program& outer = *first_of(p, rune::ir::OpKind::scan).programs[0];
  const rune::ir::Program& inner = *first_of(outer, rune::ir::OpKind::scan).programs[0];
  CHECK(holds(p, Prim::exp));
  CHECK_FALSE(holds(outer, Prim::exp));
  CHECK(holds(outer, Prim::sin));
  CHECK_FALSE(holds(inner, Prim::exp));
  CHECK_FALSE(holds(inner, Prim::sin));
  const std::vector<Tensor> unsimplified = rune::run(rune::program(f, xs, c), {xs, c});
  const auto got = compiled(xs, c), eager = f(xs, c);
  CHECK(same_bits(got.first, eager.first));
  CHECK(same_bits(got.second, eager.second));
  CHECK(same_bits(got.second, unsimplified[1]));
}

TEST_CASE("checks and callbacks on a step's invariant values stay in the step and run on every row") {
  int runs = 0;
  auto make = [](const nx::Index&, const Tensor&) { return std::make_exception_ptr(std::runtime_error("negative")); };
  auto f = [&](const Tensor& xs, const Tensor& c) {
    return rune::scan([&](const Tensor& acc, const Tensor& row) {
      Tensor e = nx::exp(c);
      nx::check(nx::greater(e, 0.), e, make);
      Tensor seen = rune::callback([&](const Tensor& v) { ++runs; return v; }, e, e);
      return std::pair{acc + row * seen, acc};
    }, nx::zeros(nx::float64, {2}), xs);
  };
  const Tensor xs = nx::reshape(nx::arange(nx::float64, 0, 8), {4, 2}), c = f64({2}, {0.5, 1});
  auto compiled = rune::jit(f);
  const rune::Program program = compiled.program(xs, c);
  const rune::ir::Program& step = *first_of(program.ir(), rune::ir::OpKind::scan).programs[0];
  CHECK(position_of(step, rune::ir::OpKind::check) < step.equations.size());
  CHECK(position_of(step, rune::ir::OpKind::callback) < step.equations.size());
  runs = 0;
  const auto got = compiled(xs, c);
  CHECK(runs == 4);
  CHECK(same_bits(got.first, f(xs, c).first));
}

TEST_CASE("values of constants alone are folded into one constant when the program is compiled") {
  auto f = [](const Tensor& x) { return x + (nx::cast(nx::create(nx::int32, {3}, {1, 2, 3}), nx::float64) + 1.); };
  const Tensor x = f64({3}, {0.5, 0.25, 0.125});
  const rune::Program program = rune::jit(f).program(x);
  const rune::ir::Program& p = program.ir();
  REQUIRE(p.equations.size() == 2);
  CHECK(p.equations[0].kind == rune::ir::OpKind::constant);
  CHECK(text(p.equations[0].constant) == "float64 [3] [2, 3, 4]");
  CHECK(p.equations[1].prim == nx::ops::Prim::add);
  CHECK(same_bits(rune::jit(f)(x), f(x)));
  // inside a step too
  auto g = [](const Tensor& xs) {
    auto step = [](const Tensor& acc, const Tensor& row) {
      return std::pair{acc + row * nx::exp(nx::scalar(nx::float64, 0.5)), acc};
    };
    return rune::scan(step, nx::scalar(nx::float64, 0.), xs).first;
  };
  const rune::Program in_step = rune::jit(g).program(x);
  const rune::ir::Program& q = in_step.ir();
  CHECK_FALSE(holds(*first_of(q, rune::ir::OpKind::scan).programs[0], nx::ops::Prim::exp));
  CHECK(same_bits(rune::jit(g)(x), g(x)));
}

TEST_CASE("folding makes no constant larger than its inputs, nor one of more than 4096 elements") {
  using nx::ops::Prim;
  auto spread = [](const Tensor& x) { return x + nx::broadcast_to(nx::scalar(nx::float64, 2.), {1000000}); };
  const rune::Program program = rune::jit(spread).program(nx::zeros(nx::float64, {1000000}));
  const rune::ir::Program& p = program.ir();
  CHECK(holds(p, Prim::broadcast));
  for (const rune::ir::Equation& eq : p.equations)
    if (eq.kind == rune::ir::OpKind::constant) CHECK(eq.constant.numel() == 1);
  auto large = [](const Tensor& x) { return x + nx::exp(nx::arange(nx::float64, 0, 5000) * 1e-3); };
  const Tensor x = nx::zeros(nx::float64, {5000});
  CHECK(holds(rune::jit(large).program(x).ir(), Prim::exp));
  CHECK(same_bits(rune::jit(large)(x), large(x)));
  auto small = [](const Tensor& x) { return x + nx::exp(nx::arange(nx::float64, 0, 4096) * 1e-3); };
  CHECK_FALSE(holds(rune::jit(small).program(nx::zeros(nx::float64, {4096})).ir(), Prim::exp));
}
