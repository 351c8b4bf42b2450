// Tensor handles: metadata, sharing, undefined handles, views, storage pool.
#include <atomic>
#include <cstdlib>
#include <new>

#include "allocations.hpp"
#include "helpers.hpp"

using nx::Tensor;
using namespace test;

TEST_CASE("a tensor reports its dtype, shape, rank, size and placement") {
  Tensor t = nx::zeros(nx::float32, {2, 3});
  CHECK(t.dtype() == nx::float32);
  CHECK(t.shape() == nx::Shape{2, 3});
  CHECK(t.ndim() == 2);
  CHECK(t.numel() == 6);
  CHECK(t.placement() == nx::Placement::host());
  CHECK(t.placement().name() == "CPU");
  CHECK_FALSE(t.is_traced());
}

TEST_CASE("copying a tensor shares it; operations never mutate operands") {
  Tensor a = f64({3}, {1, 2, 3});
  Tensor b = a;
  CHECK(b.impl() == a.impl());
  Tensor c = a + 1.;
  CHECK(values(a) == std::vector<double>{1, 2, 3});
  CHECK(values(c) == std::vector<double>{2, 3, 4});
}

TEST_CASE("a default-constructed tensor can be assigned; any other use throws") {
  Tensor t;
  CHECK_FALSE(t.defined());
  CHECK_THROWS_AS(t.dtype(), std::invalid_argument);
  CHECK_THROWS_AS(t.shape(), std::invalid_argument);
  CHECK_THROWS_WITH(nx::exp(t), test::Placed("nx::exp: operand 0 holds no value (it was default-constructed)"));
  CHECK_THROWS_WITH(t + 1., StartsWith("nx::add: "));
  CHECK_THROWS_WITH(nx::item(t), StartsWith("nx::item: "));
  CHECK_THROWS_WITH(nx::sum(t), StartsWith("nx::sum: "));
  CHECK_THROWS_WITH(nx::reshape(t, {1}), StartsWith("nx::reshape: "));
  CHECK_THROWS_WITH(nx::zeros_like(t), StartsWith("nx::zeros_like: "));
  t = nx::ones(nx::float64, {2});
  CHECK(values(t) == std::vector<double>{1, 1});
}

TEST_CASE("views share storage without copying") {
  Tensor a = nx::arange(nx::float64, 0, 6);
  Tensor m = nx::reshape(a, {2, 3});
  Tensor t = nx::transpose(m);
  Tensor b = nx::broadcast_to(nx::get(m, 1), {4, 3});
  Tensor s = nx::slice(a, {1}, {6}, {2});
  Tensor f = nx::flip(a);
  for (const Tensor& v : {m, t, b, s, f}) CHECK(v.impl()->storage == a.impl()->storage);
  CHECK(values(t) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(values(b) == std::vector<double>{3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5});
  CHECK(values(s) == std::vector<double>{1, 3, 5});
  CHECK(values(f) == std::vector<double>{5, 4, 3, 2, 1, 0});
  // arithmetic on views reads them through their strides
  CHECK(values(t * 1.) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(values(f + s.shape()[0]) == std::vector<double>{8, 7, 6, 5, 4, 3});
}

TEST_CASE("storage is 64-byte aligned and reused by a loop of same-sized operations") {
  Tensor x = nx::ones(nx::float32, {1000});
  CHECK(reinterpret_cast<std::uintptr_t>(x.impl()->storage->data) % 64 == 0);
  const void* seen = nullptr;
  int reused = 0;
  for (int i = 0; i < 10; ++i) {
    Tensor y = x * 2.;
    if (y.impl()->storage->data == seen) ++reused;
    seen = y.impl()->storage->data;
  }
  CHECK(reused >= 8);  // the freed buffer of the last iteration comes back
}

TEST_CASE("tensors can be made and read on several threads") {
  std::vector<std::thread> threads;
  std::vector<double> sums(4);
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([k, &sums] {
      Tensor acc = nx::zeros(nx::float64, {16});
      for (int i = 0; i < 200; ++i) acc = acc + double(k);
      sums[k] = nx::item(nx::sum(acc));
    });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 4; ++k) CHECK(sums[k] == 16. * 200. * k);
}

#ifndef __SANITIZE_ADDRESS__
TEST_CASE("a steady-state loop of eager operations allocates nothing") {
  Tensor x = nx::ones(nx::float64, {4});
  for (int i = 0; i < 10; ++i) x = nx::tanh(x * 0.5 + 1.);  // warm the pools
  long before = test::allocations.load();
  for (int i = 0; i < 1000; ++i) x = nx::tanh(x * 0.5 + 1.);
  CHECK(test::allocations.load() == before);
}
#endif
