// Threads sharing one compiled function and one pullback get what a single
// thread computes, and so does an operation split over oneTBB's threads.
// Also the ThreadSanitizer test (make tsan, docs/reliability.md): built
// with it, a data race fails the test too.
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include <tbb/global_control.h>

#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

namespace {

constexpr int thread_count = 4;
constexpr int calls_per_thread = 1200;

Tensor formula(const Tensor& x) { return nx::tanh(x * 2. + 1.) * x - nx::exp(-x * x) + nx::sum(nx::sin(x)); }

// Inputs of several keys (shapes and dtypes), each below the size at which
// nx splits an operation over oneTBB's threads (ops/kernels/iterate.hpp):
// ThreadSanitizer cannot see oneTBB's synchronization (tests/tsan.supp),
// so these calls check rune's own.
std::vector<Tensor> inputs() {
  return {nx::linspace(nx::float64, -1., 1., 3), nx::linspace(nx::float64, 0., 2., 5),
          nx::reshape(nx::linspace(nx::float64, -2., 2., 6), {2, 3}), nx::linspace(nx::float32, -1., 1., 4)};
}

// Runs `call(thread, i)` `calls` times on each of thread_count threads at
// once; returns how many calls gave a wrong result.
int wrong_calls(const std::function<bool(int, int)>& call, int calls = calls_per_thread) {
  std::vector<int> wrong(thread_count, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < calls; ++i)
        if (!call(t, i)) ++wrong[std::size_t(t)];
    });
  for (std::thread& t : threads) t.join();
  int total = 0;
  for (int w : wrong) total += w;
  return total;
}

}  // namespace

TEST_CASE("threads calling one compiled function on several keys get the single-threaded results") {
  const std::vector<Tensor> xs = inputs();
  std::vector<std::vector<double>> expected;
  for (const Tensor& x : xs) expected.push_back(values(formula(x)));  // eager: bit for bit what jit gives
  auto f = rune::jit(formula);
  // Each thread starts on a different key, so the first calls race on new keys.
  CHECK(wrong_calls([&](int t, int i) {
          const std::size_t k = std::size_t(t + i) % xs.size();
          return values(f(xs[k])) == expected[k];
        }) == 0);
}

// A scan promoted to machine code while other threads run it: the thread
// that wins emits, the others interpret meanwhile, all get the same bits.
TEST_CASE("threads calling one scan while it is promoted to machine code get the single-threaded results") {
  auto decay = [](const Tensor& x) {
    return rune::scan([](const Tensor& c) { return std::pair{c * 0.999 + 0.001, std::tuple<>{}}; }, x, 300).first;
  };
  const Tensor x = nx::scalar(nx::float64, 5.);
  const std::vector<double> expected = values(decay(x));  // eager
  auto f = rune::jit(decay);
  CHECK(wrong_calls([&](int, int) { return values(f(x)) == expected; }) == 0);
}

// Eager scans share one code per program (vm/executables.hpp): threads
// tracing equal and different steps at once find, build and promote the
// codes they share and get what the plain loop gives.
TEST_CASE("threads calling eager scans, sharing their codes, get the single-threaded results") {
  auto decay = [](const Tensor& x, double rate) {
    return rune::scan([rate](const Tensor& c) { return std::pair{c * rate + 0.001, std::tuple<>{}}; }, x, 300).first;
  };
  const Tensor x = nx::scalar(nx::float64, 5.);
  auto plain = [](double rate) {
    double c = 5.;
    for (int k = 0; k < 300; ++k) c = c * rate + 0.001;
    return std::vector<double>{c};
  };
  const std::vector<double> slow = plain(0.999), fast = plain(0.5);
  CHECK(wrong_calls([&](int t, int i) {
          const bool slow_one = (t + i) % 2 == 0;
          return values(decay(x, slow_one ? 0.999 : 0.5)) == (slow_one ? slow : fast);
        }, 200) == 0);
}

// A fused kernel in rows of two float64 (springs' directions over 2^16
// points: 2^17 elements a call, promoted after the first) and large enough
// to run on oneTBB: the same bits on every thread, before and after.
TEST_CASE("threads calling one fused kernel while it is promoted to machine code get the single-threaded results") {
  const std::int64_t n = 1 << 16;
  const Tensor p = nx::reshape(nx::sin(nx::arange(nx::float64, 0, double(2 * n))), {n, 2});
  std::vector<double> springs(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) springs[std::size_t(k)] = double((k * 7 + 1) % n);  // (never k: no zero length)
  const Tensor i = nx::create(nx::int32, {n}, springs);
  auto directions = [](const Tensor& v, const Tensor& j) {
    const Tensor d = nx::take(v, j, 0) - v;
    return d / nx::sqrt(nx::sum(d * d, {1}, true));
  };
  const std::vector<double> expected = values(directions(p, i));  // eager
  auto f = rune::jit(directions);
  CHECK(wrong_calls([&](int, int) { return values(f(p, i)) == expected; }, 50) == 0);  // (big calls: 50 a thread)
}

// An elementwise kernel (x86-64: a block loop; 2^17 elements a call,
// promoted in the first, on oneTBB): the same bits on every thread.
TEST_CASE("threads calling one elementwise kernel while it is promoted to machine code get the single-threaded results") {
  const Tensor x = nx::linspace(nx::float32, -3., 3., std::int64_t(1) << 17);
  auto chain = [](const Tensor& v) { return nx::tanh(v * 2. + 1.) * v - nx::exp(-v * v); };
  const std::vector<double> expected = values(chain(x));  // eager
  auto f = rune::jit(chain);
  CHECK(wrong_calls([&](int, int) { return values(f(x)) == expected; }, 8) == 0);  // (big calls: 8 a thread)
}

// Threads racing on a new key wait for the first to trace it.
TEST_CASE("threads racing on new keys trace each key once") {
  const std::vector<Tensor> xs = inputs();
  auto f = rune::jit(formula);
  wrong_calls([&](int t, int i) { return f(xs[std::size_t(t + i) % 2]).defined(); });
  CHECK(f.traces() == 2);
}

// Two compiled functions that call each other while tracing, each traced
// by its own thread at once: neither may wait for the other's trace. Run on
// threads that the test leaves running (and fails) when they do not finish.
TEST_CASE("two compiled functions that call each other while tracing, from two threads, do not deadlock") {
  using Fn = std::function<Tensor(const Tensor&)>;
  struct Pair {
    std::atomic<int> tracing{0};
    Fn f, g;
    // Until both threads trace (at most 2 s, so a lost race cannot hang).
    void meet() {
      ++tracing;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (tracing.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    }
  };
  auto pair = std::make_shared<Pair>();
  // On a vector: both tracing, then the other function on a column.
  auto calling = [p = pair.get()](Fn Pair::*other, double offset) {
    return [p, other, offset](const Tensor& x) {
      if (x.ndim() == 2) return x * 2.;
      p->meet();
      return nx::reshape((p->*other)(nx::reshape(x, {x.numel(), 1})), {x.numel()}) + offset;
    };
  };
  pair->f = rune::jit(calling(&Pair::g, 1.));
  pair->g = rune::jit(calling(&Pair::f, -1.));
  auto start = [pair](Fn Pair::*fn, std::int64_t n) {
    auto done = std::make_shared<std::promise<std::vector<double>>>();
    std::thread([pair, fn, n, done] {
      try {
        done->set_value(values((pair.get()->*fn)(nx::linspace(nx::float64, 1., double(n), n))));
      } catch (...) {
        done->set_exception(std::current_exception());
      }
    }).detach();
    return done->get_future();
  };
  std::future<std::vector<double>> from_f = start(&Pair::f, 3), from_g = start(&Pair::g, 4);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const bool finished = from_f.wait_until(deadline) == std::future_status::ready &&
                        from_g.wait_until(deadline) == std::future_status::ready;
  REQUIRE(finished);  // (else both threads wait for each other's trace: deadlocked)
  CHECK(from_f.get() == std::vector<double>{3., 5., 7.});
  CHECK(from_g.get() == std::vector<double>{1., 3., 5., 7.});
}

TEST_CASE("threads calling one pullback get the single-threaded cotangents") {
  const Tensor x = nx::linspace(nx::float64, -1., 1., 5);
  auto [y, pullback] = rune::vjp(formula, x);
  // Cotangents 1, 2 and 3 times ones, and what one thread pulls back.
  std::vector<Tensor> cts;
  std::vector<std::vector<double>> expected;
  for (double scale : {1., 2., 3.}) {
    cts.push_back(nx::full(nx::float64, y.shape(), scale));
    expected.push_back(values(pullback(cts.back())));
  }
  CHECK(wrong_calls([&](int t, int i) {
          const std::size_t k = std::size_t(t + i) % cts.size();
          return values(pullback(cts[k])) == expected[k];
        }) == 0);
}

TEST_CASE("an operation split over oneTBB's threads gives what one thread computes") {
  const Tensor x = nx::linspace(nx::float64, -3., 3., 1 << 18);  // (above the size nx splits at)
  std::vector<double> one_thread;
  {
    tbb::global_control only(tbb::global_control::max_allowed_parallelism, 1);
    one_thread = values(formula(x));
  }
  CHECK(values(formula(x)) == one_thread);
}

TEST_CASE("threads calling compiled code while others profile it and the NaN hunt goes on and off") {
  auto flight = rune::jit([](const Tensor& x) {
    return rune::scan([](const Tensor& c, const Tensor& r) { return std::pair{c * 0.5 + r, nx::sin(c)}; }, x,
                      nx::linspace(nx::float64, 0., 1., 20));
  });
  const Tensor x = nx::linspace(nx::float64, -1., 1., 3);
  const std::vector<double> expected = values(flight(x).second);
  CHECK(wrong_calls([&](int t, int i) {
          if (t == 0 && i % 10 == 0) rune::debug_nans(i % 20 == 0);  // (its finite values raise nothing)
          if (t == 1) {
            const rune::Profile p = rune::profile(flight, x);
            return !p.lines.empty() && values(flight(x).second) == expected;
          }
          return values(flight(x).second) == expected;
        }) == 0);
  rune::debug_nans(false);
}
