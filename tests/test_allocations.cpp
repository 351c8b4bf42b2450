// Zero allocation per frame (issue 26): every primitive of the table (its
// sample from primitive_cases.hpp, and variants of other dtypes and sizes),
// scans, an iterate, a cond and a map, each compiled and run in a
// Loaded::into frame loop on caller memory, allocate nothing in their steady
// state, or are listed below with the reason (docs/embedding.md, "Allocation
// per frame"). The collectives (lanes_gather, lanes_sum) have no sample of
// their own: only a map computes them, rewriting them into other primitives
// as it batches the program that holds them; the map below runs one.
#include <algorithm>
#include <array>
#include <map>
#include <new>
#include <string_view>
#include <vector>

#include "allocations.hpp"
#include "helpers.hpp"
#include "primitive_cases.hpp"
#include "vm/code.hpp"
#include "vm/executor.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace nx::ops;

namespace {

// The primitives whose compiled call allocates in its steady state, and why.
// A primitive listed here that stops allocating fails the test: take it off
// the list (and off docs/embedding.md).
// (None today: the gathers and scatters read their indices in place.)
const std::map<Prim, std::string_view> known_allocators{};

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
    INFO(info(c.prim).name << " on " << nx::name(c.operands.back().dtype()) << " operands");
    const long count = frame_allocations(c);
    if (known == known_allocators.end()) {
      CHECK(count == 0);
    } else {
      INFO("listed as allocating: " << known->second);
      CHECK(count > 0);
    }
  }
}

// The elementwise primitives, reductions and arg reductions: those whose
// samples below vary their operands' dtypes and shapes.
bool varied(Prim p) {
  switch (info(p).family) {
    case Family::unary: case Family::binary: case Family::select: case Family::convert: case Family::reduce:
    case Family::arg: return true;
    default: return false;
  }
}

// The samples of the varied primitives with each operand replaced by
// operand(its prim, itself), where the primitive takes the result.
template <class F> std::vector<test::Case> varied_samples(F operand) {
  std::vector<test::Case> out;
  for (test::Case c : test::samples()) {
    if (!varied(c.prim)) continue;
    for (Tensor& t : c.operands) t = operand(c.prim, t);
    if (std::all_of(c.operands.begin(), c.operands.end(),
                    [&](const Tensor& t) { return info(c.prim).accepts & dtype_class(t.dtype()); }))
      out.push_back(std::move(c));
  }
  return out;
}

// (the conditions of select stay bool)
Tensor integer(Prim, const Tensor& t) {
  return t.dtype() == nx::bool_ ? t : nx::cast(nx::abs(t) * 1.5 + 1., nx::int32);  // (1 to 4: no division by 0)
}
Tensor boolean(Prim, const Tensor& t) { return t.dtype() == nx::bool_ ? t : nx::greater(t, 0.); }
Tensor first_element(Prim, const Tensor& t) {
  const std::vector<double> v{test::values(t)[0]};
  return nx::create(t.dtype(), {}, std::span<const double>(v));
}
// 100 times longer along every axis: [2, 3] becomes [200, 300].
Tensor longer(Prim p, const Tensor& t) {
  static std::mt19937 rng(11);
  nx::Shape shape = t.shape();
  for (std::int64_t& n : shape) n *= 100;
  if (t.dtype() == nx::bool_) return nx::greater(test::uniform(nx::float64, shape, -1, 1, rng), 0.);
  const auto [lo, hi] = test::domain(p);
  return test::uniform(t.dtype(), shape, lo, hi, rng);
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

TEST_CASE("integer and bool operands allocate nothing per frame") {
  if (!measured()) return;
  check_frames(varied_samples(integer));
  check_frames(varied_samples(boolean));
}

TEST_CASE("0-d operands, in scalar registers, allocate nothing per frame") {
  if (!measured()) return;
  std::vector<test::Case> scalars = varied_samples(first_element);
  std::erase_if(scalars, [](const test::Case& c) {  // (a 0-d value has no axis 1 to reduce)
    return info(c.prim).family == Family::reduce || info(c.prim).family == Family::arg;
  });
  check_frames(scalars);
}

TEST_CASE("operands of 60,000 elements (kernels of many blocks, split over threads) allocate nothing per frame") {
  if (!measured()) return;
  check_frames(varied_samples(longer));
}

TEST_CASE("gathers and scatters by indices of every integer dtype, in drop mode too, allocate nothing per frame") {
  if (!measured()) return;
  std::mt19937 rng(5);
  const Tensor rows = test::uniform(nx::float64, {6, 2}, -1, 1, rng);
  const Tensor updates = test::uniform(nx::float64, {5, 2}, -1, 1, rng);
  std::vector<test::Case> cases;
  for (nx::DType dtype : {nx::int8, nx::int16, nx::int32, nx::int64, nx::uint8, nx::uint32, nx::uint64})
    for (IndexMode mode : {IndexMode::clamp, IndexMode::drop}) {
      Params q;
      q.mode = mode;
      const Tensor at = nx::cast(nx::create(nx::float64, {5}, {0, 5, 9, 2, 2}), dtype);
      cases.push_back({Prim::take, {rows, at}, q});
      cases.push_back({Prim::scatter_add, {rows, at, updates}, q});
    }
  check_frames(cases);
}

TEST_CASE("a step gathering, computing and segment-summing in one kernel allocates nothing per frame") {
  if (!measured()) return;
  auto spring = [](const std::array<Tensor, 3>& x) {
    const Tensor d = nx::take(x[0], x[2], 0) - nx::take(x[0], x[1], 0);
    const Tensor f = d * nx::tanh(d);
    return nx::segment_sum(f, x[1], 8) - nx::segment_sum(f, x[2], 8) + x[0];
  };
  std::mt19937 rng(9);
  std::vector<Memory> memory;
  memory.push_back(Memory::holding(test::uniform(nx::float64, {8, 3}, -1, 1, rng)));
  memory.push_back(Memory::holding(nx::create(nx::int32, {20},
                                                {0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 7, 7, 0, 3, 9, -1})));
  memory.push_back(Memory::holding(nx::create(nx::int32, {20},
                                                {1, 2, 3, 4, 5, 6, 7, 2, 3, 4, 5, 6, 7, 0, 1, 0, 5, 6, 1, 2})));
  const std::array<Tensor, 3> args{memory[0].view, memory[1].view, memory[2].view};
  const rune::Loaded<Tensor(std::array<Tensor, 3>)> loaded(rune::jit(spring).program(args));
  const std::string code = rune::bytecode(loaded.program());
  INFO(code);
  CHECK(code.find(" = scatter_add ") != std::string::npos);  // (folded into the kernel that gathers)
  Memory result(type_of(spring(args)));
  CHECK(allocations_of([&] { loaded.into(result.view, args); }) == 0);
  CHECK(test::same_bits(result.view, spring(args)));
}

TEST_CASE("a code of more registers than a frame holds inline allocates nothing per frame") {
  if (!measured()) return;
  auto long_chain = [](const std::array<Tensor, 2>& x) {  // (each value a tensor register: over 32 of them)
    Tensor y = x[0];
    for (int k = 0; k < 24; ++k) y = nx::sin(y) * x[1] + double(k);
    return y;
  };
  std::mt19937 rng(11);
  Memory x(TensorType{nx::float64, {16}}), w(TensorType{nx::float64, {16}});
  copy_elements(*test::uniform(nx::float64, {16}, -1, 1, rng).impl(), *x.view.impl());
  copy_elements(*test::uniform(nx::float64, {16}, -1, 1, rng).impl(), *w.view.impl());
  const std::array<Tensor, 2> args{x.view, w.view};
  const rune::Loaded<Tensor(std::array<Tensor, 2>)> loaded(rune::jit(long_chain).program(args));
  CHECK(loaded.program().code().tensors.size() > 32);
  Memory result(TensorType{nx::float64, {16}});
  CHECK(allocations_of([&] { loaded.into(result.view, args); }) == 0);
  CHECK(test::same_bits(result.view, long_chain(args)));
}

TEST_CASE("products and decompositions of larger matrices allocate nothing per frame") {
  if (!measured()) return;
  std::mt19937 rng(3);
  auto uniform = [&](nx::DType dtype, const nx::Shape& shape) { return test::uniform(dtype, shape, -1, 1, rng); };
  const Tensor a = uniform(nx::float64, {2, 100, 100}) + nx::eye(nx::float64, 100) * 30.;  // (well conditioned)
  check_frames({
      {Prim::matmul, {uniform(nx::float64, {2, 200, 300}), uniform(nx::float64, {2, 300, 200})}, {}},
      {Prim::matmul, {uniform(nx::float32, {400, 300}), uniform(nx::float32, {300, 200})}, {}},
      {Prim::solve, {a, uniform(nx::float64, {2, 100, 20})}, {}},
      {Prim::cholesky, {nx::matmul(a, nx::transpose(a, {0, 2, 1}))}, {}},
  });
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

TEST_CASE("a compiled scan over the rows of caller memory allocates nothing per frame") {
  if (!measured()) return;
  auto f = [](const Tensor& x, const Tensor& xs) {
    return rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{c * 0.75 + row, nx::sin(c)}; }, x, xs);
  };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 8);
  const Tensor xs = nx::reshape(nx::linspace(nx::float64, 0., 1., 80), {10, 8});
  Memory state = Memory::holding(x), rows = Memory::holding(xs), ys(type_of(xs));
  const std::pair<Tensor, Tensor> out{state.view, ys.view};
  auto loaded = rune::Loaded<std::pair<Tensor, Tensor>(Tensor, Tensor)>(rune::jit(f).program(state.view, rows.view));
  CHECK(allocations_of([&] { loaded.into(out, state.view, rows.view); }) == 0);
  Tensor eager = x;
  for (int k = 0; k < warm_frames + counted_frames; ++k) eager = f(eager, xs).first;
  CHECK(test::same_bits(state.view, eager));
}

TEST_CASE("a compiled iterate allocates nothing per frame") {
  if (!measured()) return;
  auto f = [](const Tensor& x) {
    auto until = [](const Tensor& c) { return nx::greater(nx::max(c), 10.); };
    return rune::iterate(50, until, [](const Tensor& c) { return c * 1.5 + 0.25; }, x);
  };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 8);
  Memory start = Memory::holding(x), end(type_of(x));
  auto loaded = rune::Loaded<Tensor(Tensor)>(rune::jit(f).program(start.view));
  CHECK(allocations_of([&] { loaded.into(end.view, start.view); }) == 0);
  CHECK(test::same_bits(end.view, f(x)));
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

TEST_CASE("a compiled map over a collective (rune::lanes) allocates nothing per frame") {
  if (!measured()) return;
  const rune::Axis rows = rune::axis();
  auto f = [rows](const Tensor& x) {
    return rune::vmap([rows](const Tensor& row) { return row - nx::max(rune::lanes(rows, row), {0}); }, rows)(x);
  };
  const Tensor x = nx::reshape(nx::linspace(nx::float64, -1., 1., 32), {4, 8});
  Memory in = Memory::holding(x), out(type_of(x));
  auto loaded = rune::Loaded<Tensor(Tensor)>(rune::jit(f).program(in.view));
  CHECK(rune::to_string(loaded.program()).find("lanes") == std::string::npos);  // (batched into other primitives)
  CHECK(allocations_of([&] { loaded.into(out.view, in.view); }) == 0);
  CHECK(test::same_bits(out.view, f(x)));
}
