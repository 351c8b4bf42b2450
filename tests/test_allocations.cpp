// Zero allocation per frame (issue 26): every primitive of the table (its
// sample from primitive_cases.hpp), a scan and a cond, each compiled and run
// in a Loaded::into frame loop on caller memory, allocate nothing in their
// steady state, or are listed below with the reason (docs/embedding.md,
// "Allocation per frame"). The collectives have no sample: only a map
// computes them, and the map's trace rewrites them into other primitives,
// so no program holds one at the top level.
#include <array>
#include <cstring>
#include <map>
#include <new>
#include <string_view>
#include <vector>

#include "allocations.hpp"
#include "helpers.hpp"
#include "primitive_cases.hpp"
#include "vm/executor.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace nx::ops;

namespace {

// The primitives whose compiled call allocates in its steady state, and why.
// A primitive listed here that stops allocating fails the test: take it off
// the list (and off docs/embedding.md).
const std::map<Prim, std::string_view> known_allocators{
    {Prim::take, "indices copied to int64 (being fixed)"},
    {Prim::scatter_add, "indices copied to int64 (being fixed)"},
    {Prim::dynamic_slice, "indices copied to int64 (being fixed)"},
    {Prim::dynamic_update_slice, "indices copied to int64 (being fixed)"},
};

// Caller memory holding one value (aligned for every dtype), and the
// writable tensor borrowing it.
struct Memory {
  std::vector<std::max_align_t> bytes;
  Tensor view;
  explicit Memory(const TensorType& type)
      : bytes(std::size_t(nx::numel(type.shape)) * nx::size_of(type.dtype) / sizeof(std::max_align_t) + 1),
        view(nx::borrow(type.dtype, type.shape, static_cast<void*>(bytes.data()))) {}
  Memory(Memory&&) = default;  // (the elements stay where they are: the view still borrows them)
  Memory(const Memory&) = delete;
  // Memory holding a copy of t's elements.
  static Memory holding(const Tensor& t) {
    Memory m(type_of(t));
    copy_elements(*t.impl(), *m.view.impl());
    return m;
  }
};

constexpr int warm_frames = 10, counted_frames = 100;

// The allocations of `counted_frames` calls of frame() after `warm_frames`
// that fill the pools (each allocation's backtrace printed with
// RUNE_TEST_ALLOCATION_TRACE=1: allocations.hpp).
template <class Frame> long allocations_of(Frame&& frame) {
  for (int k = 0; k < warm_frames; ++k) frame();
  const long before = test::allocations.load();
  test::tracing = true;
  for (int k = 0; k < counted_frames; ++k) frame();
  test::tracing = false;
  return test::allocations.load() - before;
}

// A program of the one primitive of c, compiled (rune::jit's program, after
// the passes), loaded, and run into caller memory on arguments in caller
// memory: its allocations per 100 frames, and its result checked against
// eager's bits.
template <std::size_t N> long frame_allocations(const test::Case& c) {
  std::vector<Memory> memory;
  std::array<Tensor, N> args;
  for (std::size_t k = 0; k < N; ++k) args[k] = memory.emplace_back(Memory::holding(c.operands[k])).view;
  const Prim prim = c.prim;
  const Params params = c.params;
  auto one = [prim, params](const std::array<Tensor, N>& x) { return bind(prim, std::span<const Tensor>(x), params); };
  const rune::Loaded<Tensor(std::array<Tensor, N>)> loaded(rune::jit(one).program(args));
  const Tensor eager = bind(prim, std::span<const Tensor>(c.operands), params);
  Memory result(type_of(eager));
  const long count = allocations_of([&] { loaded.into(result.view, args); });
  CHECK(test::same_bits(result.view, eager));
  return count;
}

long frame_allocations(const test::Case& c) {
  switch (c.operands.size()) {
    case 1: return frame_allocations<1>(c);
    case 2: return frame_allocations<2>(c);
    case 3: return frame_allocations<3>(c);
  }
  FAIL("a sample of " << c.operands.size() << " operands");
  return 0;
}

void check_frames(const std::vector<test::Case>& cases) {
  for (const test::Case& c : cases) {
    const auto known = known_allocators.find(c.prim);
    INFO(info(c.prim).name << " on " << nx::name(c.operands[0].dtype()) << " operands");
    const long count = frame_allocations(c);
    if (known == known_allocators.end()) {
      CHECK(count == 0);
    } else {
      INFO("listed as allocating: " << known->second);
      CHECK(count > 0);
    }
  }
}

// The reference interpreter (the VM's oracle) allocates as it goes, and
// sanitizer builds count nothing.
bool measured() { return test::counting && !rune::vm::reference_selected(); }

}  // namespace

TEST_CASE("the count sees malloc, calloc, realloc, the aligned allocations and operator new") {
  if (!test::counting) return;
  // (each pointer goes through an empty asm, so that the compiler keeps the
  // allocation it would otherwise remove with its free)
  auto kept = [](void* p) {
    asm volatile("" : : "r"(p) : "memory");
    return p;
  };
  const long before = test::allocations.load();
  std::free(kept(std::malloc(24)));
  std::free(kept(std::calloc(3, 8)));
  std::free(kept(std::realloc(kept(std::malloc(8)), 4096)));  // (two)
  std::free(kept(std::aligned_alloc(64, 128)));
  void* p = nullptr;
  REQUIRE(posix_memalign(&p, 64, 128) == 0);
  std::free(kept(p));
  delete static_cast<long*>(kept(new long(1)));
  ::operator delete(kept(::operator new(64, std::align_val_t(128))), std::align_val_t(128));
  CHECK(test::allocations.load() - before == 8);
}

TEST_CASE("every primitive's compiled frame loop on caller memory allocates nothing in its steady state") {
  if (!measured()) return;
  check_frames(test::samples());
}

TEST_CASE("float32 samples of the differentiable primitives allocate nothing per frame either") {
  if (!measured()) return;
  check_frames(test::cases(nx::float32));
}

TEST_CASE("a compiled scan of 10 elementwise steps allocates nothing per frame") {
  if (!measured()) return;
  auto f = [](const Tensor& x) {
    return rune::scan([](const Tensor& c) { return std::pair{nx::tanh(c * 0.5 + 1.), c * c}; }, x, 10);
  };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 8);
  Memory state = Memory::holding(x), ys(type_of(f(x).second));
  const std::pair<Tensor, Tensor> out{state.view, ys.view};
  auto loaded = rune::Loaded<std::pair<Tensor, Tensor>(Tensor)>(rune::jit(f).program(state.view));
  CHECK(allocations_of([&] { loaded.into(out, state.view); }) == 0);  // the carry stepped in place
  Tensor eager = x;
  for (int k = 0; k < warm_frames + counted_frames; ++k) eager = f(eager).first;
  CHECK(test::same_bits(state.view, eager));
}

TEST_CASE("a compiled cond allocates nothing per frame, whichever branch it takes") {
  if (!measured()) return;
  auto f = [](const Tensor& pred, const Tensor& x) {
    return rune::cond(pred, [&] { return nx::exp(x * 0.25) - 1.; }, [&] { return nx::sin(x) * 0.5; });
  };
  bool take_then = true;
  const Tensor pred = nx::borrow(nx::bool_, {}, &take_then);
  const Tensor x = nx::linspace(nx::float64, -1., 1., 8);
  Memory state = Memory::holding(x);
  auto loaded = rune::Loaded<Tensor(Tensor, Tensor)>(rune::jit(f).program(pred, state.view));
  CHECK(allocations_of([&] {
          loaded.into(state.view, pred, state.view);
          take_then = !take_then;
        }) == 0);
  Tensor eager = x;
  for (int k = 0; k < warm_frames + counted_frames; ++k) eager = f(nx::scalar(nx::bool_, k % 2 == 0), eager);
  CHECK(test::same_bits(state.view, eager));
}
