// The VM (vm/): what programs compile to (scalar instructions, fused kernels,
// scans and sub-codes), and that what it computes has the reference
// interpreter's bits (the golden programs and the generated ones compare
// the two as well: test_golden, test_generated).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>

#include <tbb/global_control.h>

#include "helpers.hpp"
#include "ir/eval.hpp"
#include "ir/passes/pipeline.hpp"
#include "vm/compile.hpp"
#include "vm/executables.hpp"
#include "vm/listing.hpp"
#include "vm/kernel_memory.hpp"
#include "vm/operands.hpp"
#include "vm/verify.hpp"
#include <rune/rune.hpp>

#include "allocations.hpp"

using nx::Tensor;
using test::same_bits;


namespace {

using Three = std::tuple<Tensor, Tensor, Tensor>;

template <class F, class... Args> std::shared_ptr<const rune::vm::Code> compiled(F f, const Args&... args) {
  auto program = std::make_shared<const rune::ir::Program>(rune::ir::simplify(rune::program(f, args...).ir()));
  return rune::vm::compile(program);
}

template <class F, class... Args> std::string listing(F f, const Args&... args) {
  return rune::vm::listing(*compiled(f, args...));
}

// The program's results on the VM and on the reference interpreter agree bit for bit.
void same_on_both(const rune::vm::Code& code, const std::vector<Tensor>& args) {
  const rune::vm::Values vm = rune::vm::run(code, args);
  const std::vector<Tensor> reference = rune::ir::evaluate(*code.program, args);
  REQUIRE(vm.size() == reference.size());
  for (std::size_t i = 0; i < vm.size(); ++i) {
    INFO("result " << i << ": " << nx::to_string(vm[i]) << " against " << nx::to_string(reference[i]));
    CHECK(same_bits(vm[i], reference[i]));
  }
}

std::pair<Three, Tensor> lorenz_step(const Three& s, const Tensor&) {
  auto [x, y, z] = s;
  Tensor dx = 10. * (y - x), dy = x * (28. - z) - y, dz = x * y - (8. / 3.) * z;
  return {Three{x + 0.01 * dx, y + 0.01 * dy, z + 0.01 * dz}, x};
}

Tensor chain(const Tensor& x) { return nx::tanh(x * 2. + 1.) * x - nx::exp(-x * x); }

// The chain compiled gives eager's bits on x, on every thread and on one.
void chain_as_eager(const Tensor& x) {
  const Tensor eager = chain(x);
  auto compiled = rune::jit(chain);
  CHECK(same_bits(compiled(x), eager));
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  CHECK(same_bits(compiled(x), eager));
}

// A cloth-like mesh: 300 masses' positions (float64 [300, 2]) and the int32
// ends of 1,097 springs between them.
std::tuple<Tensor, Tensor, Tensor> springs() {
  const Tensor pos = nx::reshape(nx::linspace(nx::float64, -3., 4., 2 * 300), {300, 2});
  std::vector<double> ends(1097 * 2);
  for (std::size_t k = 0; k < ends.size(); ++k) ends[k] = double((k * 7919) % 300);
  auto ids = [&](std::size_t from) {
    return nx::cast(nx::create(nx::float64, {1097}, std::span<const double>(ends.data() + from, 1097)), nx::int32);
  };
  return {pos, ids(0), ids(1097)};
}

std::size_t count(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a scalar loop compiles to scalar instructions and gives the plain C++ loop's bits") {
  const std::int64_t n = 1000;
  auto lorenz = [&](const Three& s) { return rune::scan(lorenz_step, s, nx::zeros(nx::float64, {n})); };
  const Three one{nx::scalar(nx::float64, 1.), nx::scalar(nx::float64, 1.), nx::scalar(nx::float64, 1.)};
  const std::string text = listing(lorenz, one);
  INFO(text);
  const std::string step = text.substr(text.find("its step:"));
  CHECK(count(step, "mul_f64") == 7);
  CHECK(count(step, "call") == 0);
  CHECK(count(step, "box") == 0);
  CHECK(count(step, "load") == 0);
  auto [state, xs] = rune::jit(lorenz)(one);
  double x = 1, y = 1, z = 1;
  std::vector<double> trajectory;
  for (std::int64_t i = 0; i < n; ++i) {
    trajectory.push_back(x);
    double dx = 10. * (y - x), dy = x * (28. - z) - y, dz = x * y - (8. / 3.) * z;
    x = x + 0.01 * dx, y = y + 0.01 * dy, z = z + 0.01 * dz;
  }
  CHECK(test::bits(nx::item(std::get<0>(state))) == test::bits(x));
  CHECK(test::bits(nx::item(std::get<1>(state))) == test::bits(y));
  CHECK(test::bits(nx::item(std::get<2>(state))) == test::bits(z));
  CHECK(nx::to_vector<double>(xs) == trajectory);
}

TEST_CASE("an elementwise chain is one fused kernel whose bits are eager's at every size and thread count") {
  const std::string text = listing(chain, nx::zeros(nx::float32, {8}));
  CHECK(count(text, "= fused ") == 1);
  CHECK(count(text, "  call ") == 0);
  for (nx::DType dtype : {nx::float32, nx::float64})
    for (std::int64_t size : {0, 1, 5, 511, 512, 513, 1023, 1024, 1025, 300001}) {
      INFO(nx::name(dtype) << " [" << size << "]");
      chain_as_eager(nx::linspace(dtype, -3., 3., size));
    }
}

TEST_CASE("a kernel writing more than half the last-level cache streams its result, with the same bits") {
  const std::size_t threshold = rune::vm::streaming_threshold();
  if (threshold > (std::size_t(256) << 20)) {
    WARN("a last-level cache of " << 2 * threshold << " bytes: not tried");
    return;
  }
  chain_as_eager(nx::linspace(nx::float32, -3., 3., std::int64_t(threshold / 4 + 1)));
}

TEST_CASE("a fused kernel's temporaries share block buffers where their lives do not overlap") {
  const auto code = compiled(chain, nx::zeros(nx::float32, {8}));
  REQUIRE(code->kernels.size() == 1);
  const rune::vm::FusedKernel& m = code->kernels[0];
  std::size_t temporaries = 0;
  for (const rune::vm::FusedKernel::Slot& slot : m.slots)
    if (slot.source == rune::vm::FusedKernel::Source::computed && slot.reg < 0) {
      ++temporaries;
      CHECK(slot.buffer >= 0);
    }
  CHECK(temporaries == 7);
  CHECK(m.buffers.size() == 3);  // (exp(-x * x) waits in one while tanh(x * 2 + 1) * x needs two)
  // A step never writes the buffer of a value it reads.
  for (const rune::vm::FusedKernel::Step& step : m.steps)
    for (int i = 0; i < nx::ops::info(step.prim).arity; ++i) {
      const rune::vm::FusedKernel::Slot &in = m.slots[std::size_t(step.in[i])], &out = m.slots[std::size_t(step.out)];
      if (in.buffer >= 0) CHECK(in.buffer != out.buffer);
    }
}

TEST_CASE("fused kernels read broadcast scalars, one-element tensors and strided views, and write what is read outside") {
  auto f = [](const Tensor& m, const Tensor& one, const Tensor& s) {
    Tensor a = m * s + one;
    Tensor b = nx::where(nx::greater(a, one), nx::sqrt(a), -a);
    return std::pair{a, nx::cast(b, nx::float32) * nx::cast(s, nx::float32)};
  };
  const Tensor m = nx::transpose(nx::reshape(nx::linspace(nx::float64, -2., 2., 12), {3, 4}));  // strided
  const Tensor one = nx::ones(nx::float64, {1, 1}), s = nx::scalar(nx::float64, 1.5);
  const std::string text = listing(f, m, one, s);
  INFO(text);
  CHECK(count(text, "  fused ") == 1);
  auto code = compiled(f, m, one, s);
  same_on_both(*code, {m, one, s});
  CHECK(test::text(rune::jit(f)(m, one, s).second) == test::text(f(m, one, s).second));
}

TEST_CASE("fused kernels read operands broadcast along middle axes, gathered per block, with eager's bits") {
  // b along axis 1, c along axes 0 and 2 (in [2, 3, 1, 700], rows of 2100 where the bias, first, makes the
  // kernel's rows 700: gathered too), bias a row; the sums over the last axis fold in.
  auto f = [](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& bias) {
    const Tensor y = nx::tanh(a * b - bias + c);
    return std::pair{y, nx::sum(y * b, {3})};
  };
  for (const nx::Shape& shape : {nx::Shape{3, 4, 5, 7}, nx::Shape{6, 50, 70, 3}, nx::Shape{2, 3, 5, 700}, nx::Shape{2, 3, 1, 700}}) {
    INFO(nx::to_string(shape));
    const std::int64_t n = nx::numel(shape);
    const Tensor a = nx::reshape(nx::linspace(nx::float64, -2., 2., n), shape);
    nx::Shape b_shape = shape, c_shape = shape;
    b_shape[1] = 1;
    c_shape[0] = c_shape[2] = 1;
    const Tensor b = nx::reshape(nx::linspace(nx::float64, 0.5, 1.5, nx::numel(b_shape)), b_shape);
    const Tensor c = nx::reshape(nx::linspace(nx::float64, -1., 1., nx::numel(c_shape)), c_shape);
    const Tensor bias = nx::linspace(nx::float64, 0., 1., shape[3]);
    const std::string text = listing(f, a, b, c, bias);
    INFO(text);
    CHECK(count(text, "  fused ") == 1);
    CHECK(count(text, "  call ") == 0);
    auto code = compiled(f, a, b, c, bias);
    same_on_both(*code, {a, b, c, bias});
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    same_on_both(*code, {a, b, c, bias});
  }
  // A strided operand broadcast along a middle axis, and one of lower rank.
  auto g = [](const Tensor& x, const Tensor& w, const Tensor& v) { return x * w - v; };
  const Tensor x = nx::reshape(nx::linspace(nx::float32, -1., 1., 2 * 3 * 4), {2, 3, 4});
  const Tensor w = nx::transpose(nx::reshape(nx::linspace(nx::float32, 1., 2., 8), {4, 1, 2}), {2, 1, 0});
  const Tensor v = nx::reshape(nx::linspace(nx::float32, 0., 1., 3), {3, 1});
  REQUIRE(!nx::ops::is_contiguous(*w.impl()));
  const std::string text = listing(g, x, w, v);
  INFO(text);
  CHECK(count(text, "  fused ") == 1);
  same_on_both(*compiled(g, x, w, v), {x, w, v});
}

TEST_CASE("a reduction of a fused kernel's value over all its elements is folded into the kernel, with eager's bits") {
  auto f = [](const Tensor& x) {
    Tensor e = nx::exp(x) - 1.;
    return std::tuple{nx::sum(x * x), nx::max(e), nx::min(e), nx::prod(x * 0.5 + 1.), nx::mean(nx::abs(x))};
  };
  const std::string text = listing(f, nx::zeros(nx::float32, {8}));
  INFO(text);
  CHECK(count(text, "= fused ") == 1);
  CHECK(count(text, "  call ") == 0);
  CHECK(count(text, "= reduce_sum m") == 2);
  CHECK(count(text, "= reduce_max m") == 1);
  auto integers = [](const Tensor& x) { return std::pair{nx::sum(x * x), nx::max(x - 1)}; };
  // (sizes around a block, a segment of the eager reduction, and its parallel grain)
  for (std::int64_t size : {1, 5, 511, 512, 513, 1023, 1024, 1025, 32768, 32769, 131072, 300001}) {
    for (nx::DType dtype : {nx::float32, nx::float64}) {
      INFO(nx::name(dtype) << " [" << size << "]");
      const Tensor x = nx::linspace(dtype, -3., 3., size);
      auto code = compiled(f, x);
      same_on_both(*code, {x});
      tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      same_on_both(*code, {x});
    }
    const Tensor i = nx::cast(nx::linspace(nx::float64, -30., 30., size), nx::int32);
    same_on_both(*compiled(integers, i), {i});
  }
  // An equation reading the result waits for the kernel (a second pass for x - mean(x));
  // an empty tensor sums to 0; a reduction over some axes is an eager call.
  auto centred = [](const Tensor& x) { return nx::sum((x - nx::mean(x * 2.)) * x); };
  const std::string two = listing(centred, nx::zeros(nx::float64, {4}));
  INFO(two);
  CHECK(count(two, "= fused ") == 2);
  for (std::int64_t size : {0, 3, 70000}) {
    const Tensor x = nx::linspace(nx::float64, -1., 2., size);
    same_on_both(*compiled(centred, x), {x});
  }
  // Over the trailing axes: rows, each reduced in eager's order; over a leading axis, an eager call.
  auto rows = [](const Tensor& x) {
    Tensor e = nx::exp(x - 1.);
    return std::tuple{nx::sum(x * x, {1}), nx::max(e, {1}), nx::sum(e, {1})};
  };
  const std::string by_rows = listing(rows, nx::zeros(nx::float64, {3, 4}));
  INFO(by_rows);
  CHECK(count(by_rows, "= fused ") == 1);
  CHECK(count(by_rows, "; rows of 4") == 3);
  auto columns = [](const Tensor& x) { return nx::sum(x * x, {0}); };
  CHECK(count(listing(columns, nx::zeros(nx::float64, {3, 4})), " = reduce_sum t") == 1);
  for (nx::DType dtype : {nx::float32, nx::float64})
    for (auto [n_rows, row] : {std::pair{1, 7}, {3, 4}, {200, 10}, {4, 512}, {5, 1024}, {3, 1500}, {2, 40000}, {70, 3000}}) {
      INFO(nx::name(dtype) << " [" << n_rows << ", " << row << "]");
      const Tensor x = nx::reshape(nx::linspace(dtype, -2., 2., n_rows * row), {n_rows, row});
      auto code = compiled(rows, x);
      same_on_both(*code, {x});
      tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      same_on_both(*code, {x});
    }
  auto trailing_two = [](const Tensor& x) { return nx::sum(nx::abs(x), {1, 2}); };
  const Tensor cube = nx::reshape(nx::linspace(nx::float32, -2., 2., 6 * 5 * 7), {6, 5, 7});
  CHECK(count(listing(trailing_two, cube), "; rows of 35") == 1);
  same_on_both(*compiled(trailing_two, cube), {cube});
  const Tensor empty_rows = nx::zeros(nx::float64, {4, 0});
  same_on_both(*compiled([](const Tensor& x) { return nx::sum(x * 2., {1}); }, empty_rows), {empty_rows});
}

TEST_CASE("an operand repeated along the kernel's leading axes (a bias on each row) joins the kernel") {
  auto layer = [](const Tensor& x, const Tensor& b, const Tensor& c) {
    Tensor h = nx::tanh(x * 2. + b) * c;
    return std::pair{h, nx::sum(h * b, {1})};
  };
  const std::string text = listing(layer, nx::zeros(nx::float32, {4, 3}), nx::zeros(nx::float32, {3}),
                                   nx::zeros(nx::float32, {1, 3}));
  INFO(text);
  CHECK(count(text, "= fused ") == 1);
  CHECK(count(text, "steps, rows of 3") == 1);
  CHECK(count(text, "  call ") == 0);
  for (nx::DType dtype : {nx::float32, nx::float64})
    for (auto [n_rows, row] : {std::pair{4, 3}, {128, 256}, {300, 10}, {3, 1500}, {70, 2500}, {1, 64}}) {
      INFO(nx::name(dtype) << " [" << n_rows << ", " << row << "]");
      const Tensor x = nx::reshape(nx::linspace(dtype, -2., 2., n_rows * row), {n_rows, row});
      const Tensor b = nx::linspace(dtype, -1., 1., row), c = nx::reshape(nx::linspace(dtype, 0.5, 1.5, row), {1, row});
      auto code = compiled(layer, x, b, c);
      same_on_both(*code, {x, b, c});
      tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      same_on_both(*code, {x, b, c});
    }
  // A reduction of all the elements of a kernel in rows: blocks of whole rows fed to it in order,
  // the bits of one pass (across the eager reduction's segments too).
  auto total = [](const Tensor& x, const Tensor& b) { return nx::sum(nx::exp(x * 0.5 + b)); };
  const std::string one_pass = listing(total, nx::ones(nx::float64, {4, 3}), nx::ones(nx::float64, {3}));
  INFO(one_pass);
  CHECK(count(one_pass, "steps, rows of 3") == 1);
  CHECK(count(one_pass, " = reduce_sum t") == 0);
  for (auto [n_rows, row] : {std::pair{4, 3}, {20000, 10}, {1200, 256}, {3, 1500}, {30, 4100}}) {
    INFO("[" << n_rows << ", " << row << "]");
    const Tensor x = nx::reshape(nx::linspace(nx::float64, -2., 2., n_rows * row), {n_rows, row});
    const Tensor b = nx::linspace(nx::float64, -1., 1., row);
    auto code = compiled(total, x, b);
    same_on_both(*code, {x, b});
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    same_on_both(*code, {x, b});
  }
  auto per_matrix = [](const Tensor& x, const Tensor& b) { return nx::sum(x * b, {1, 2}); };
  for (std::int64_t row : {1000, 3000}) {  // (results' rows longer than a segment, cut inside a block of rows)
    const Tensor x = nx::reshape(nx::linspace(nx::float32, -2., 2., 3 * 40 * row), {3, 40, row});
    const Tensor b = nx::linspace(nx::float32, -1., 1., row);
    CHECK(count(listing(per_matrix, x, b), "; rows of " + std::to_string(40 * row)) == 1);
    same_on_both(*compiled(per_matrix, x, b), {x, b});
  }
  // Rows of two lengths do not share a kernel.
  auto two = [](const Tensor& x, const Tensor& b, const Tensor& c) { return nx::sum(x + b) + nx::sum(nx::reshape(x, {6, 2}) + c); };
  const Tensor x = nx::ones(nx::float64, {4, 3}), b = nx::ones(nx::float64, {3}), c = nx::ones(nx::float64, {2});
  same_on_both(*compiled(two, x, b, c), {x, b, c});
  CHECK(count(listing(two, x, b, c), "= fused ") == 2);
}

TEST_CASE("an operand with one element per row (a column) joins the kernel, repeated along each row") {
  auto centred = [](const Tensor& x, const Tensor& scale) {
    const Tensor m = nx::reshape(nx::max(x, {1}), {x.shape()[0], 1});
    const Tensor e = nx::exp((x - m) * scale);
    return e / nx::reshape(nx::sum(e, {1}), {x.shape()[0], 1});
  };
  const std::string text = listing(centred, nx::zeros(nx::float64, {3, 4}), nx::ones(nx::float64, {3, 1}));
  INFO(text);
  CHECK(count(text, "= fused ") == 1);  // (then the division, one eager call)
  CHECK(count(text, "steps, rows of 4") == 1);
  for (nx::DType dtype : {nx::float32, nx::float64})
    for (auto [n_rows, row] : {std::pair{3, 4}, {200, 10}, {64, 1024}, {3, 1500}, {700, 300}}) {
      INFO(nx::name(dtype) << " [" << n_rows << ", " << row << "]");
      const Tensor x = nx::reshape(nx::linspace(dtype, -3., 3., n_rows * row), {n_rows, row});
      const Tensor scale = nx::reshape(nx::linspace(dtype, 0.5, 1.5, n_rows), {n_rows, 1});
      auto code = compiled(centred, x, scale);
      same_on_both(*code, {x, scale});
      tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
      same_on_both(*code, {x, scale});
    }
  // A column over several trailing axes, beside a row of the same length.
  auto slabs = [](const Tensor& x, const Tensor& per_slab, const Tensor& row) { return x * per_slab + row; };
  const Tensor x = nx::reshape(nx::linspace(nx::float32, -1., 1., 2 * 3 * 5), {2, 3, 5});
  const Tensor per_slab = nx::reshape(nx::create(nx::float32, {2}, {2.f, -1.f}), {2, 1, 1});
  const Tensor row = nx::reshape(nx::linspace(nx::float32, 0., 1., 15), {3, 5});
  CHECK(count(listing(slabs, x, per_slab, row), "steps, rows of 15") == 1);
  same_on_both(*compiled(slabs, x, per_slab, row), {x, per_slab, row});
}

TEST_CASE("slices and reshapes that are runs of their operand's elements are read in place by the kernels") {
  auto neighbours = [](const Tensor& x) {
    const Tensor padded = nx::pad(x, {{1, 1}});
    const std::int64_t n = x.shape()[0];
    return nx::slice(padded, {0}, {n}) + nx::slice(padded, {2}, {n + 2}) - 2. * x;
  };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 7);
  const std::string text = listing(neighbours, x);
  INFO(text);
  CHECK(count(text, "  call ") == 1);  // the pad; the slices are t1@0 and t1@2
  CHECK(count(text, "@0 ") + count(text, "@2") == 2);
  same_on_both(*compiled(neighbours, x), {x});

  // Views of views compose; a view of a strided value reads it in C order; a view that is a result,
  // or that something else reads, is made where it is read.
  auto middle = [](const Tensor& m) { return nx::reshape(nx::slice(nx::reshape(m, {4, 3}), {1, 0}, {3, 3}), {6}); };
  auto rows = [&](const Tensor& m) { return std::pair{middle(m) * 2. + 1., nx::slice(m, {0, 0}, {1, 4}) * 3. - 1.}; };
  const Tensor m = nx::reshape(nx::linspace(nx::float32, 0., 11., 12), {3, 4});
  const std::string views = listing(rows, m);
  INFO(views);
  CHECK(count(views, "t0@3") == 1);
  CHECK(count(views, "t0@0") == 1);
  CHECK(count(views, "  call ") == 0);
  same_on_both(*compiled(rows, m), {m});
  const Tensor strided = nx::transpose(nx::reshape(nx::linspace(nx::float32, 0., 11., 12), {4, 3}));
  same_on_both(*compiled(rows, strided), {strided});
  auto summed = [&](const Tensor& m) { return std::pair{middle(m) * 2. + 1., nx::sum(middle(m), {0})}; };
  same_on_both(*compiled(summed, m), {m});
  auto returned = [](const Tensor& v) { const Tensor head = nx::slice(v, {0}, {2}); return std::pair{head, head * 2. + 1.}; };
  same_on_both(*compiled(returned, x), {x});
  auto broadcast = [](const Tensor& a, const Tensor& b) { return a * 2. + nx::reshape(b, {1, 3}); };
  const Tensor a = nx::ones(nx::float64, {2, 3}), b = nx::linspace(nx::float64, 0., 2., 3);
  same_on_both(*compiled(broadcast, a, b), {a, b});
}

TEST_CASE("takes along axis 0 feeding a fused kernel are gathered in its blocks, with eager's bits") {
  // Springs between the rows of a [n, 2] position array: both ends gathered, the rest elementwise: one pass.
  auto stretch = [](const Tensor& pos, const Tensor& a, const Tensor& b) {
    const Tensor d = nx::take(pos, b, 0) - nx::take(pos, a, 0);
    return d * d * 0.5 + 1.;
  };
  const auto [pos, a, b] = springs();
  const std::string text = listing(stretch, pos, a, b);
  INFO(text);
  CHECK(count(text, "  call ") == 0);
  CHECK(count(text, "  fused ") == 1);
  CHECK(count(text, "t0[t1]") == 1);
  CHECK(count(text, "t0[t2]") == 1);
  CHECK(count(text, "rows of 2") == 1);
  CHECK(count(text, "; rows read in place") == 1);  // (the difference reads both ends where a and b point)
  same_on_both(*compiled(stretch, pos, a, b), {pos, a, b});
  CHECK(same_bits(rune::jit(stretch)(pos, a, b), stretch(pos, a, b)));

  // Paired reads of float32 rows of 3 by int64 indices, negative and past the end (clamped), a product; and
  // per lane under vmap (gathers along axis 1); a gather read twice is copied into the block as before.
  {
    const Tensor x = nx::reshape(nx::linspace(nx::float32, -1., 2., 15), {5, 3});
    const Tensor i = nx::create(nx::int64, {7}, {0, -1, 4, 9, 2, -8, 3}), j = nx::create(nx::int64, {7}, {4, 3, 0, 1, -2, 2, 77});
    auto product = [](const Tensor& v, const Tensor& p, const Tensor& q) {
      return nx::take(v, p, 0) * nx::take(v, q, 0) * 2.;
    };
    INFO(listing(product, x, i, j));
    CHECK(count(listing(product, x, i, j), "; rows read in place") == 1);
    same_on_both(*compiled(product, x, i, j), {x, i, j});
    auto twice = [](const Tensor& v, const Tensor& p, const Tensor& q) {
      const Tensor tp = nx::take(v, p, 0);
      return (tp - nx::take(v, q, 0)) * tp;
    };
    CHECK(count(listing(twice, x, i, j), "; rows read in place") == 0);
    same_on_both(*compiled(twice, x, i, j), {x, i, j});
    const Tensor lanes = nx::stack({pos, pos * 2., pos - 1.});
    auto mapped = [&](const Tensor& p) { return rune::vmap([&](const Tensor& one) { return stretch(one, a, b); })(p); };
    CHECK(count(listing(mapped, lanes), "; rows read in place") == 1);
    same_on_both(*compiled(mapped, lanes), {lanes});
    // In drop mode (the derivative of two segment sums: takes of the cotangent), an index outside names zeros.
    auto loss = [](const Tensor& f, const Tensor& p, const Tensor& q, const Tensor& w) {
      return nx::sum(w * (nx::segment_sum(f, p, 4) - nx::segment_sum(f, q, 4)));
    };
    auto scaled_grad = [&](const Tensor& f, const Tensor& p, const Tensor& q, const Tensor& w) {
      return rune::grad([&](const Tensor& g) { return loss(g, p, q, w); })(f) * 3.;
    };
    const Tensor f = nx::reshape(nx::linspace(nx::float64, -1., 1., 12), {6, 2});
    const Tensor p = nx::create(nx::int32, {6}, {0, 1, 5, -1, 2, 3}), q = nx::create(nx::int32, {6}, {3, 3, 0, 9, 1, -2});
    const Tensor w = nx::reshape(nx::linspace(nx::float64, 0.5, 4., 8), {4, 2});
    const std::string drop = listing(scaled_grad, f, p, q, w);
    INFO(drop);
    CHECK(count(drop, "; rows read in place") == 1);
    CHECK(count(drop, "mode=drop") >= 2);
    same_on_both(*compiled(scaled_grad, f, p, q, w), {f, p, q, w});
  }

  // Indices of every integer dtype, negative and past the end (clamped), rows of 3 (blocks of 170 rows) and of
  // one element, a sum over each gathered row folded in, a large gather split over threads.
  for (nx::DType dtype : {nx::int8, nx::int16, nx::int64, nx::uint8, nx::uint32, nx::uint64}) {
    const Tensor at = nx::cast(nx::create(nx::float64, {6}, {0, 4, 2, 9, 1, 3}), dtype);
    const Tensor rows3 = nx::reshape(nx::linspace(nx::float32, 0., 1., 15), {5, 3});
    auto row_sums = [](const Tensor& x, const Tensor& i) { return nx::sum(nx::exp(nx::take(x, i, 0)), {1}); };
    same_on_both(*compiled(row_sums, rows3, at), {rows3, at});
  }
  const Tensor wrapped = nx::create(nx::int64, {5}, {-1, -7, 0, 300, 2});
  auto scaled = [](const Tensor& x, const Tensor& i) { return nx::take(x, i, 0) * 3. - 1.; };
  const Tensor column = nx::linspace(nx::float64, 0., 1., 4);
  same_on_both(*compiled(scaled, column, wrapped), {column, wrapped});
  const Tensor wide = nx::reshape(nx::linspace(nx::float64, 0., 1., 300 * 256), {300, 256});
  const Tensor many = nx::cast(nx::floor(nx::linspace(nx::float64, 0., 299., 600)), nx::int32);
  CHECK(count(listing(scaled, wide, many), "t0[t1]") == 1);  // (153,600 elements: over threads)
  same_on_both(*compiled(scaled, wide, many), {wide, many});
  const Tensor wider = nx::reshape(nx::linspace(nx::float64, 0., 1., 30 * 1500), {30, 1500});  // (rows past a block)
  const Tensor few = nx::cast(nx::create(nx::float64, {3}, {29, 0, 15}), nx::int32);
  CHECK(count(listing(scaled, wider, few), "  call ") == 1);
  same_on_both(*compiled(scaled, wider, few), {wider, few});

  // A take read by anything else, or as a program result, is emitted as a call where it is read.
  auto returned = [](const Tensor& x, const Tensor& i) {
    const Tensor t = nx::take(x, i, 0);
    return std::pair{t, nx::sum(t * 2.)};
  };
  same_on_both(*compiled(returned, pos, a), {pos, a});
  auto of_a_row = [](const Tensor& x, const Tensor& i) {
    return nx::take(x, i, 0) * 2. + nx::reshape(nx::reshape(nx::take(x, i, 0), {2194}), {1097, 2});
  };
  same_on_both(*compiled(of_a_row, pos, a), {pos, a});
  // Drop mode (segment_sum's derivative): rows outside the axis are zeros.
  auto pulled = [](const Tensor& x, const Tensor& i) {
    const Tensor c = nx::reshape(nx::linspace(nx::float64, 1., 3., 6), {3, 2});
    const Tensor g = rune::grad([&](const Tensor& f) { return nx::sum(nx::segment_sum(f, i, 3) * c); }, x);
    return g * x + 1.;
  };
  const Tensor owners = nx::create(nx::int32, {4}, {0, 2, 5, -1});
  const Tensor weights = nx::reshape(nx::linspace(nx::float64, 1., 2., 8), {4, 2});
  CHECK(count(listing(pulled, weights, owners), " mode=drop]") == 1);
  same_on_both(*compiled(pulled, weights, owners), {weights, owners});
  CHECK(same_bits(rune::jit(pulled)(weights, owners), pulled(weights, owners)));
}

TEST_CASE("segment sums and scatter_adds along axis 0 of a kernel's values are added block by block, as eager adds") {
  // The two sums of a spring force over its ends: one pass over the springs, then one over the masses.
  auto forces = [](const Tensor& pos, const Tensor& a, const Tensor& b) {
    const Tensor f = nx::tanh(nx::take(pos, b, 0) - nx::take(pos, a, 0)) * 3.;
    return nx::segment_sum(f, a, 300) - nx::segment_sum(f, b, 300);
  };
  const auto [pos, a, b] = springs();
  const std::string text = listing(forces, pos, a, b);
  INFO(text);
  CHECK(count(text, "  fused ") == 1);
  CHECK(count(text, "  call ") == 1);  // (the difference, one step over the masses: eager's own loop)
  CHECK(count(text, " = scatter_add ") == 2);
  CHECK(count(text, "; mode=drop") == 2);
  same_on_both(*compiled(forces, pos, a, b), {pos, a, b});
  CHECK(same_bits(rune::jit(forces)(pos, a, b), forces(pos, a, b)));

  // scatter_add's clamped indices into a computed operand, rows of 3 and of one element, dtypes added by the
  // row loop (float16, complex, integers), and a kernel large enough for threads: run on one, in eager's order.
  auto scattered = [](const Tensor& x, const Tensor& i, const Tensor& u) {
    return nx::scatter_add(x * 2., i, nx::exp(u) - 1.);
  };
  const Tensor wrapped = nx::create(nx::int64, {7}, {-1, -9, 0, 4, 300, 2, 2});
  for (nx::DType dtype : {nx::float64, nx::float32, nx::float16, nx::complex64}) {
    const Tensor x = nx::cast(nx::reshape(nx::linspace(nx::float64, 0., 1., 15), {5, 3}), dtype);
    const Tensor u = nx::cast(nx::reshape(nx::linspace(nx::float64, -1., 1., 21), {7, 3}), dtype);
    CHECK(count(listing(scattered, x, wrapped, u), " = scatter_add ") == 1);
    same_on_both(*compiled(scattered, x, wrapped, u), {x, wrapped, u});
  }
  auto counted = [](const Tensor& x, const Tensor& i, const Tensor& u) { return nx::scatter_add(x, i, u * u + 1); };
  const Tensor ints = nx::cast(nx::linspace(nx::float64, -5., 5., 7), nx::int32);
  const Tensor counts = nx::zeros(nx::int32, {4});
  same_on_both(*compiled(counted, counts, wrapped, ints), {counts, wrapped, ints});
  const std::int64_t n = 1000000;
  const Tensor many = nx::cast(nx::floor(nx::linspace(nx::float64, 0., 999., n)), nx::uint32);
  const Tensor values = nx::linspace(nx::float64, -1., 1., n);
  auto summed = [](const Tensor& v, const Tensor& i) { return nx::segment_sum(nx::sin(v) * v, i, 1000); };
  CHECK(count(listing(summed, values, many), " = scatter_add ") == 1);
  same_on_both(*compiled(summed, values, many), {values, many});

  // A value summed and also read elsewhere is written; a scatter whose result feeds the kernel's own values, or
  // whose updates are not the kernel's shape, stays a call.
  auto both = [](const Tensor& v, const Tensor& i) {
    const Tensor e = nx::exp(v);
    return std::pair{nx::segment_sum(e, i, 4), e * 2.};
  };
  const Tensor ids = nx::create(nx::int32, {5}, {0, 3, 3, 1, 9});
  const Tensor v5 = nx::linspace(nx::float64, 0., 1., 5);
  same_on_both(*compiled(both, v5, ids), {v5, ids});
  auto fed_back = [](const Tensor& v, const Tensor& i) { return nx::take(nx::segment_sum(v * 2., i, 5), i, 0) + v; };
  same_on_both(*compiled(fed_back, v5, ids), {v5, ids});
  CHECK(same_bits(rune::jit(fed_back)(v5, ids), fed_back(v5, ids)));
}

TEST_CASE("gathers and scatters along a later axis (a map's lanes before the indexed axis) join kernels too") {
  const auto [pos, a, b] = springs();
  // Along axis 1: each of 4 slabs' rows at the indices; blocks of 512 elements cross the slabs' edges.
  auto stretched = [](const Tensor& x, const Tensor& i, const Tensor& j) {
    const Tensor half = x * 0.5;  // (before the kernel: its operand)
    const Tensor f = nx::tanh(nx::take(x, j, 1) - nx::take(x, i, 1));
    return nx::scatter_add(half, i, f, 1);
  };
  const Tensor slabs = nx::stack({pos, pos * 2., pos - 1., -pos});  // [4, 300, 2]
  const std::string text = listing(stretched, slabs, a, b);
  INFO(text);
  CHECK(count(text, "[t2 axis=1]") == 1);
  CHECK(count(text, " = scatter_add ") == 1);
  CHECK(count(text, "  call ") == 1);  // (the half, one step: eager's own loop)
  same_on_both(*compiled(stretched, slabs, a, b), {slabs, a, b});
  const Tensor few = nx::create(nx::int64, {5}, {2, -1, 0, 400, 1});
  const Tensor small = nx::reshape(nx::linspace(nx::float64, -1., 1., 3 * 4 * 2), {3, 4, 2});
  same_on_both(*compiled(stretched, small, few, few), {small, few, few});
  // The spring forces mapped over lanes of positions: the lanes' gathers and segment sums in the kernels.
  auto forces = [](const Tensor& x, const Tensor& i, const Tensor& j) {
    const Tensor f = nx::tanh(nx::take(x, j, 0) - nx::take(x, i, 0)) * 3.;
    return nx::segment_sum(f, i, 300) - nx::segment_sum(f, j, 300);
  };
  auto mapped = [&](const Tensor& xs, const Tensor& i, const Tensor& j) {
    return rune::vmap([&](const Tensor& x) { return forces(x, i, j); })(xs);
  };
  const std::string lanes = listing(mapped, slabs, a, b);
  INFO(lanes);
  CHECK(count(lanes, "axis=1]") == 2);
  CHECK(count(lanes, " = scatter_add ") == 2);
  same_on_both(*compiled(mapped, slabs, a, b), {slabs, a, b});
  CHECK(same_bits(rune::jit(mapped)(slabs, a, b), mapped(slabs, a, b)));
}

TEST_CASE("sums, products, maxima and minima of a kernel's short rows give eager's bits, signed zeros and NaN too") {
  // (rows of at most 16 float64 or 32 float32 elements are folded by one loop: kernels::short_rows). Two
  // sets, so that no row meets two different NaNs, whose payload's survival varies by loop (docs/vm.md "Bits").
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> with_nan{-0., 0., 1.5, -2.25, 3e-320, std::nan(""), -0., 7.};
  const std::vector<double> with_inf{-0., 0., 1.5, -2.25, 1e308, inf, -0., -3e-310};
  auto summed = [](const Tensor& t) { return nx::sum(t * 1., {1}); };
  auto multiplied = [](const Tensor& t) { return nx::prod(t * 1., {1}); };
  auto largest = [](const Tensor& t) { return nx::max(t * 1., {1}); };
  auto smallest = [](const Tensor& t) { return nx::min(t * 1., {1}); };
  for (const std::vector<double>* specials : {&with_nan, &with_inf})
    for (nx::DType dtype : {nx::float64, nx::float32})
      for (std::int64_t n : {2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33}) {
        std::vector<double> v(std::size_t(40 * n));
        for (std::size_t k = 0; k < v.size(); ++k)
          v[k] = (k * 7 + std::size_t(n)) % 3 == 0 ? (*specials)[(k * 13) % specials->size()] : -0.;
        const Tensor x = nx::cast(nx::create(nx::float64, {40, n}, std::span<const double>(v)), dtype);
        INFO(nx::name(dtype) << " rows of " << n);
        CHECK(count(listing(summed, x), "reduce_sum") == 1);
        same_on_both(*compiled(summed, x), {x});
        same_on_both(*compiled(multiplied, x), {x});
        same_on_both(*compiled(largest, x), {x});
        same_on_both(*compiled(smallest, x), {x});
      }
}

TEST_CASE("values of one element per row join the kernel of the rows they come from (Step::Over), with eager's bits") {
  // A spring's length and force magnitude ([n, 1] and [n]) computed per row in the kernel computing its
  // [n, 2] vector, spread back along the rows where the vector reads them: one kernel up to the scatters.
  auto forces = [](const Tensor& pos, const Tensor& a, const Tensor& b, const Tensor& rest) {
    const Tensor d = nx::take(pos, b, 0) - nx::take(pos, a, 0);
    const Tensor len = nx::sqrt(nx::sum(d * d, {1}, true));
    const Tensor f = (len - rest) * 100. * (d / len);
    return nx::segment_sum(f, a, 300) - nx::segment_sum(f, b, 300);
  };
  const auto [pos, a, b] = springs();
  const Tensor rest = nx::reshape(nx::linspace(nx::float64, 0.5, 1.5, 1097), {1097, 1});
  const std::string text = listing(forces, pos, a, b, rest);
  INFO(text);
  CHECK(count(text, "  fused ") == 1);
  CHECK(count(text, "  call ") == 1);  // (the difference of the sums)
  CHECK(count(text, "; per row") == 3);  // (sqrt, sub, mul)
  CHECK(count(text, " = reshape ") == 0);  // (keepdims's reshape, read only in the kernel: its operand's elements)
  CHECK(count(text, " = spread ") == 2);
  CHECK(count(text, " = reduce_sum ") == 1);
  same_on_both(*compiled(forces, pos, a, b, rest), {pos, a, b, rest});
  CHECK(same_bits(rune::jit(forces)(pos, a, b, rest), forces(pos, a, b, rest)));

  // Without gathers the reduction starts the kernel's rows; per-row values read outside are written in their
  // own shapes ([n] and [n, 1]); a sum over all the elements is folded in beside them; rows of 3, float32,
  // and a kernel large enough for threads (chunks of whole rows).
  auto normalized = [](const Tensor& x) {
    const Tensor d = x * 2. - 1.;
    const Tensor n2 = nx::sum(d * d, {1});
    const Tensor len = nx::sqrt(nx::reshape(n2, {n2.shape()[0], 1}));
    const Tensor u = d / len;
    return std::tuple{u, n2, len + 1., nx::sum(u * x)};
  };
  for (nx::DType dtype : {nx::float64, nx::float32})
    for (std::int64_t rows : {5, 171, 100000})
      for (std::int64_t row : {2, 3}) {
        const Tensor x = nx::cast(nx::reshape(nx::linspace(nx::float64, -2., 3., rows * row), {rows, row}), dtype);
        INFO(nx::name(dtype) << " " << rows << " rows of " << row);
        const std::string shown = listing(normalized, x);
        INFO(shown);
        CHECK(count(shown, "  fused ") == 1);
        CHECK(count(shown, "; per row") >= 2);
        same_on_both(*compiled(normalized, x), {x});
      }

  // Signed zeros, NaN, infinities and denormals in the rows: each reduction's per-row result as eager's,
  // read back along the rows.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> specials{-0., 0., 1.5, -2.25, 3e-320, std::nan(""), inf, -inf, 1e308};
  std::vector<double> v(40 * 3);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = k % 4 == 0 ? specials[(k * 5) % specials.size()] : -0.25 * double(k % 7);
  const Tensor x = nx::create(nx::float64, {40, 3}, std::span<const double>(v));
  auto spread_back = [](const Tensor& t) {
    const Tensor y = t * 1.;
    return (y - nx::max(y, {1}, true)) * nx::min(y, {1}, true) + nx::prod(y, {1}, true) / nx::sum(y, {1}, true);
  };
  CHECK(count(listing(spread_back, x), "  fused ") == 1);
  same_on_both(*compiled(spread_back, x), {x});

  // A ground contact on the masses: a strided column of the positions compared per row, spread along them.
  auto contact = [](const Tensor& p, const Tensor& force) {
    const Tensor y = nx::slice(p, {0, 1}, {300, 2});
    const Tensor ey = nx::create(nx::float64, {2}, {0., 1.});
    return force + nx::where(nx::less(y, 0.), -1e5 * y, 0.) * ey;
  };
  CHECK(count(listing(contact, pos, pos), "  fused ") == 1);
  same_on_both(*compiled(contact, pos, pos), {pos, pos});

  // A value of one element per row read along other axes than its rows' ([1, 2, 2] against [2, 2, 2]) is not
  // spread: the kernel closes there, and the next one reads it from memory.
  auto across = [](const Tensor& t) {
    const Tensor y = t * 2.;
    return y * nx::reshape(nx::sum(y, {2}), {1, 2, 2});
  };
  const Tensor cube = nx::reshape(nx::linspace(nx::float64, -1., 2., 8), {2, 2, 2});
  CHECK(count(listing(across, cube), " = spread ") == 0);
  same_on_both(*compiled(across, cube), {cube});
  CHECK(same_bits(rune::jit(across)(cube), across(cube)));
}

TEST_CASE("a fused kernel writes its result in place of an operand that dies there, when nothing else holds it") {
  auto f = [](const Tensor& a) { return nx::exp(nx::matmul(a, a)) * 2. + 1.; };
  const Tensor a = nx::reshape(nx::linspace(nx::float64, -1., 1., 16), {4, 4});
  auto code = compiled(f, a);
  const std::string text = rune::vm::listing(*code);
  INFO(text);
  CHECK(count(text, "; in place of t") == 1);
  REQUIRE(code->instructions[0].op == rune::vm::Op::call);  // the product; then the kernel
  const std::size_t product = std::size_t(code->calls[0].outputs[0]), end = code->instructions.size();
  const std::vector<Tensor> args{a};

  rune::vm::Frame frame = rune::vm::start(*code, args);
  rune::vm::execute(*code, frame, 0, 1);
  const void* buffer = frame.tensors[product].impl()->storage->data;
  rune::vm::execute(*code, frame, 1, end);
  const Tensor result = rune::vm::results(*code, std::move(frame))[0];
  CHECK(result.impl()->storage->data == buffer);
  CHECK(same_bits(result, f(a)));

  // The product held elsewhere too: a fresh buffer, the product unchanged.
  rune::vm::Frame again = rune::vm::start(*code, args);
  rune::vm::execute(*code, again, 0, 1);
  const Tensor held = again.tensors[product];
  const std::string before = test::text(held);
  rune::vm::execute(*code, again, 1, end);
  const Tensor fresh = rune::vm::results(*code, std::move(again))[0];
  CHECK(fresh.impl()->storage->data != held.impl()->storage->data);
  CHECK(test::text(held) == before);
  CHECK(same_bits(fresh, result));

  // Results and values read later are never written in place; a sub-code's parameters neither.
  auto returned = [](const Tensor& x) { Tensor h = nx::matmul(x, x); return std::pair{h, nx::exp(h) * 2.}; };
  auto read_later = [](const Tensor& x) { Tensor h = nx::matmul(x, x); return nx::matmul(nx::exp(h) * 2., h); };
  auto in_a_branch = [](const Tensor& x) {
    return rune::cond(nx::scalar(nx::bool_, true), [&] { return nx::exp(x) * 2.; }, [&] { return x; });
  };
  CHECK(count(listing(returned, a), "in place") == 0);
  CHECK(count(listing(read_later, a), "in place") == 0);
  CHECK(count(listing(in_a_branch, a), "in place") == 0);
  same_on_both(*compiled(read_later, a), args);
}

TEST_CASE("a dynamic_update_slice writes its window in place of an operand that dies there, when nothing else holds "
          "it") {
  const Tensor window = nx::ones(nx::float64, {1, 4});
  const Tensor at = nx::create(nx::int64, {2}, {1, 0});
  auto f = [&](const Tensor& a) { return nx::dynamic_update_slice(nx::exp(a), window, at); };
  const Tensor a = nx::reshape(nx::linspace(nx::float64, -1., 1., 16), {4, 4});
  auto code = compiled(f, a);
  auto update = std::find_if(code->instructions.begin(), code->instructions.end(), [&](const rune::vm::Instruction& in) {
    return in.op == rune::vm::Op::call && code->calls[std::size_t(in.aux)].donor >= 0;
  });
  REQUIRE(update != code->instructions.end());
  const auto pc = std::size_t(update - code->instructions.begin()), end = code->instructions.size();
  const auto operand = std::size_t(code->calls[std::size_t(update->aux)].donor);
  const std::vector<Tensor> args{a};

  rune::vm::Frame frame = rune::vm::start(*code, args);
  rune::vm::execute(*code, frame, 0, pc);
  const void* buffer = frame.tensors[operand].impl()->storage->data;
  rune::vm::execute(*code, frame, pc, end);
  const Tensor result = rune::vm::results(*code, std::move(frame))[0];
  CHECK(result.impl()->storage->data == buffer);
  CHECK(same_bits(result, f(a)));

  // The operand held elsewhere too: a fresh buffer, the operand unchanged.
  rune::vm::Frame again = rune::vm::start(*code, args);
  rune::vm::execute(*code, again, 0, pc);
  const Tensor held = again.tensors[operand];
  const std::string before = test::text(held);
  rune::vm::execute(*code, again, pc, end);
  const Tensor fresh = rune::vm::results(*code, std::move(again))[0];
  CHECK(fresh.impl()->storage->data != held.impl()->storage->data);
  CHECK(test::text(held) == before);
  CHECK(same_bits(fresh, result));

  // The caller's argument, or an operand read later, is never written over.
  auto of_argument = [&](const Tensor& x) { return nx::dynamic_update_slice(x, window, at); };
  const std::string argument = test::text(a);
  CHECK(same_bits(rune::jit(of_argument)(a), of_argument(a)));
  CHECK(test::text(a) == argument);
  auto read_later = [&](const Tensor& x) {
    const Tensor e = nx::exp(x);
    return nx::dynamic_update_slice(e, window, at) + e;
  };
  const auto later = compiled(read_later, a);
  CHECK(std::none_of(later->calls.begin(), later->calls.end(), [](const rune::vm::Call& call) { return call.donor >= 0; }));
  same_on_both(*later, args);
  // A loop writing a row of its carried buffer per trip (as iterate's
  // derivative does): the eager bits.
  auto rows = [&](const Tensor& x) {
    using Carry = std::pair<Tensor, Tensor>;  // (buffer, row)
    return rune::iterate(
               10, [](const Carry& c) { return nx::greater_equal(c.second, 4.); },
               [&](const Carry& c) {
                 const Tensor row = nx::broadcast_to(nx::exp(c.second) + nx::sum(c.first), {1, 4});
                 const Tensor start = nx::concatenate({nx::reshape(nx::cast(c.second, nx::int64), {1}), nx::zeros(nx::int64, {1})});
                 return Carry{nx::dynamic_update_slice(c.first, row, start), c.second + 1.};
               },
               Carry{x, nx::scalar(nx::float64, 0.)})
        .first;
  };
  CHECK(same_bits(rune::jit(rows)(a), rows(a)));
}

TEST_CASE("a matrix product computes into the buffer of a dead value of its type, or into the caller's") {
  // u dies in the row sums (which cannot take its buffer); v, the next product, can.
  auto f = [](const Tensor& a, const Tensor& b) {
    const Tensor u = nx::matmul(a, a);
    return std::pair{nx::sum(u, {1}), nx::matmul(b, b)};
  };
  const Tensor a = nx::reshape(nx::linspace(nx::float64, -1., 1., 16), {4, 4});
  const Tensor b = nx::reshape(nx::linspace(nx::float64, 0., 3., 16), {4, 4});
  auto code = compiled(f, a, b);
  const std::string text = rune::vm::listing(*code);
  INFO(text);
  REQUIRE(code->calls.size() == 3);  // u, the sums, v
  const std::int32_t u = code->calls[0].outputs[0], v = code->calls[2].outputs[0];
  CHECK(code->calls[0].recycled == -1);
  CHECK(code->calls[2].recycled == u);
  CHECK(count(text, "; in t" + std::to_string(u) + "'s buffer") == 1);
  const std::vector<Tensor> args{a, b};
  same_on_both(*code, args);

  rune::vm::Frame frame = rune::vm::start(*code, args);
  rune::vm::execute(*code, frame, 0, code->instructions.size() - 1);
  const void* buffer = frame.tensors[std::size_t(u)].impl()->storage->data;
  rune::vm::execute(*code, frame, code->instructions.size() - 1, code->instructions.size());
  CHECK(frame.tensors[std::size_t(v)].impl()->storage->data == buffer);
  CHECK(same_bits(frame.tensors[std::size_t(v)], nx::matmul(b, b)));

  // u held elsewhere too: a fresh buffer, u unchanged.
  rune::vm::Frame again = rune::vm::start(*code, args);
  rune::vm::execute(*code, again, 0, code->instructions.size() - 1);
  const Tensor held = again.tensors[std::size_t(u)];
  rune::vm::execute(*code, again, code->instructions.size() - 1, code->instructions.size());
  CHECK(again.tensors[std::size_t(v)].impl()->storage->data != held.impl()->storage->data);
  CHECK(same_bits(held, nx::matmul(a, a)));

  // A call writing into the caller's buffers: the product is computed there, unless the buffer is an argument's.
  auto product = [](const Tensor& x, const Tensor& y) { return nx::matmul(x, y); };
  auto p = compiled(product, a, b);
  std::vector<double> memory(16);
  const Tensor into = nx::borrow(nx::float64, {4, 4}, memory.data());
  rune::vm::Frame call = rune::vm::start(*p, args);
  call.args = args;
  call.into = std::span<const Tensor>(&into, 1);
  rune::vm::execute(*p, call, 0, p->instructions.size());
  CHECK(call.tensors[std::size_t(p->calls[0].outputs[0])].impl()->storage->data == memory.data());
  CHECK(same_bits(call.tensors[std::size_t(p->calls[0].outputs[0])], nx::matmul(a, b)));
  const std::vector<double> a_values = test::values(a);
  std::copy(a_values.begin(), a_values.end(), memory.begin());  // (a in the caller's buffer, an argument too)
  rune::run_into(rune::program(product, a, b), std::vector<Tensor>{into, b}, std::vector<Tensor>{into});
  CHECK(same_bits(into, nx::matmul(a, b)));
}

namespace {

// 0, after a callback has recorded the buffer of t in `seen` (a loop's carry, run by run).
Tensor record_buffer(std::vector<const void*>& seen, const Tensor& t) {
  auto record = [&seen](const Tensor& x) {
    seen.push_back(x.impl()->storage->data);
    return nx::scalar(nx::float64, 0.);
  };
  return rune::callback(record, nx::scalar(nx::float64, 0.), t);
}

// The loop read the caller's value in its first run (unchanged), then one buffer in each of the other three.
void one_buffer_after_the_first(const std::vector<const void*>& seen, const Tensor& init, const std::string& before) {
  CHECK(test::text(init) == before);
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == init.impl()->storage->data);
  CHECK(seen[2] == seen[1]);
  CHECK(seen[3] == seen[1]);
}

}  // namespace

TEST_CASE("a scan's step computes its carry in place of the previous row's, never of the caller's value") {
  std::vector<const void*> seen;  // the carry's buffer, row by row
  auto step = [&](const Tensor& c, const Tensor& row) {
    const Tensor r = record_buffer(seen, c);
    const Tensor n = nx::tanh(c * 0.5 + row);
    return std::pair{n, nx::sum(n) + r};
  };
  auto f = [&](const Tensor& x, const Tensor& xs) { return rune::scan(step, x, xs); };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 1000);
  const Tensor xs = nx::reshape(nx::linspace(nx::float64, 0., 1., 4000), {4, 1000});
  auto code = compiled(f, x, xs);
  REQUIRE(code->scans.size() == 1);
  const std::string step_text = rune::vm::listing(*code->scans[0].step);
  INFO(step_text);
  CHECK(count(step_text, "; in place of t") == 1);
  const std::string before = test::text(x);
  seen.clear();
  const std::vector<Tensor> args{x, xs};
  const rune::vm::Values got = rune::vm::run(*code, args);
  one_buffer_after_the_first(seen, x, before);
  const std::vector<Tensor> reference = rune::ir::evaluate(*code->program, args);
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(same_bits(got[k], reference[k]));

  // One value carried twice, and carries swapped: nothing written in place of a value another carry holds.
  auto twice = [](const std::pair<Tensor, Tensor>& c, const Tensor& row) {
    const Tensor n = nx::tanh(c.first * 0.5 + c.second * row);
    return std::pair{std::pair{n, n}, nx::sum(n)};
  };
  auto swapped = [](const std::pair<Tensor, Tensor>& c, const Tensor& row) {
    return std::pair{std::pair{c.second, c.first * 0.5 + row}, nx::sum(c.first)};
  };
  same_on_both(*compiled([&](const Tensor& a, const Tensor& b) { return rune::scan(twice, std::pair{a, a * 2.}, b); }, x, xs), args);
  same_on_both(*compiled([&](const Tensor& a, const Tensor& b) { return rune::scan(swapped, std::pair{a, a * 2.}, b); }, x, xs), args);
  CHECK(test::text(x) == before);
}

TEST_CASE("an iterate's step computes its carry in place of the previous trip's, never of the caller's value") {
  std::vector<const void*> seen;  // the carry's buffer, trip by trip
  using Carry = std::pair<Tensor, Tensor>;
  auto until = [](const Carry& c) { return nx::greater_equal(c.second, nx::scalar(nx::int32, 4.)); };
  auto step = [&](const Carry& c) {
    const Tensor r = record_buffer(seen, c.first);
    return Carry{nx::tanh(c.first * 0.5 + r) + 1., c.second + nx::scalar(nx::int32, 1.)};
  };
  auto f = [&](const Tensor& x) { return rune::iterate(10, until, step, Carry{x, nx::scalar(nx::int32, 0.)}).first; };
  const Tensor x = nx::linspace(nx::float64, -1., 1., 1000);
  auto code = compiled(f, x);
  REQUIRE(code->invokes.size() == 1);
  const std::string step_text = rune::vm::listing(*code->invokes[0].codes[1]);
  INFO(step_text);
  CHECK(count(step_text, "; in place of t") == 1);
  const std::string before = test::text(x);
  const std::vector<Tensor> args{x};
  const rune::vm::Values got = rune::vm::run(*code, args);
  one_buffer_after_the_first(seen, x, before);
  CHECK(same_bits(got[0], rune::ir::evaluate(*code->program, args)[0]));
}

TEST_CASE("solve and cholesky compute into the caller's buffers, 16-bit floats through float32") {
  auto f = [](const Tensor& a, const Tensor& b) { return std::pair{nx::solve(a, b), nx::cholesky(a)}; };
  for (const nx::DType d : {nx::float64, nx::float32, nx::float16}) {
    INFO(nx::name(d));
    const Tensor a = nx::create(d, {3, 3}, {4., 1., 0., 1., 3., 1., 0., 1., 2.});
    const Tensor b = nx::create(d, {3, 2}, {-1., -0.5, 0.25, 1., 1.5, 2.});
    const std::vector<Tensor> into{nx::zeros(d, {3, 2}), nx::zeros(d, {3, 3})};
    const void* const memory[] = {into[0].impl()->storage->data, into[1].impl()->storage->data};
    auto code = compiled(f, a, b);
    REQUIRE(code->calls.size() == 2);
    const std::vector<Tensor> args{a, b};
    rune::vm::Frame call = rune::vm::start(*code, args);
    call.args = args;
    call.into = into;
    rune::vm::execute(*code, call, 0, code->instructions.size());
    for (std::size_t k = 0; k < 2; ++k)
      CHECK(call.tensors[std::size_t(code->calls[k].outputs[0])].impl()->storage->data == memory[k]);
    CHECK(same_bits(into[0], nx::solve(a, b)));
    CHECK(same_bits(into[1], nx::cholesky(a)));
    same_on_both(*code, args);
  }
}

TEST_CASE("a kernel's result takes the buffer of a dead value of its type; other dead values are released") {
  // u dies in the column sums; the kernel's result, of u's type, takes its buffer.
  auto f = [](const Tensor& a) {
    const Tensor u = nx::matmul(a, a);
    return nx::exp(a) * 2. + nx::sum(u, {0});
  };
  const Tensor a = nx::reshape(nx::linspace(nx::float64, -1., 1., 64 * 64), {64, 64});
  auto code = compiled(f, a);
  const std::string text = rune::vm::listing(*code);
  INFO(text);
  REQUIRE(code->calls.size() == 2);  // u, the sums; then the kernel
  const std::int32_t u = code->calls[0].outputs[0];
  CHECK(count(text, "; in t" + std::to_string(u) + "'s buffer") == 1);
  CHECK(count(text, "release") == 0);  // (u is taken, a is the caller's, the sums are small)
  const std::vector<Tensor> args{a};
  same_on_both(*code, args);
  rune::vm::Frame frame = rune::vm::start(*code, args);
  rune::vm::execute(*code, frame, 0, 1);
  const void* buffer = frame.tensors[std::size_t(u)].impl()->storage->data;
  rune::vm::execute(*code, frame, 1, code->instructions.size());
  CHECK(rune::vm::results(*code, std::move(frame))[0].impl()->storage->data == buffer);

  // u held elsewhere too: a fresh buffer, u unchanged.
  rune::vm::Frame again = rune::vm::start(*code, args);
  rune::vm::execute(*code, again, 0, 1);
  const Tensor held = again.tensors[std::size_t(u)];
  rune::vm::execute(*code, again, 1, code->instructions.size());
  CHECK(rune::vm::results(*code, std::move(again))[0].impl()->storage->data != held.impl()->storage->data);
  CHECK(same_bits(held, nx::matmul(a, a)));

  // No later value of u's type: u is let go after its last reader, before the next product.
  auto g = [](const Tensor& x, const Tensor& y) {
    const Tensor u = nx::matmul(x, x);
    return std::pair{nx::sum(u, {0}), nx::matmul(x, y)};
  };
  const Tensor b = nx::ones(nx::float64, {64, 32});
  auto released = compiled(g, a, b);
  const std::string listed = rune::vm::listing(*released);
  INFO(listed);
  const std::int32_t v = released->calls[0].outputs[0];
  CHECK(count(listed, "release    t" + std::to_string(v) + "\n") == 1);
  REQUIRE(released->instructions[2].op == rune::vm::Op::release);
  const std::vector<Tensor> both{a, b};
  same_on_both(*released, both);
  rune::vm::Frame stepped = rune::vm::start(*released, both);
  rune::vm::execute(*released, stepped, 0, 2);
  CHECK(stepped.tensors[std::size_t(v)].defined());
  rune::vm::execute(*released, stepped, 2, 3);
  CHECK(!stepped.tensors[std::size_t(v)].defined());
}

TEST_CASE("a donated argument's buffer is written in place when nothing else in the call views it") {
  auto update = [](const Tensor& w, const Tensor& g) { return w - g * 0.5; };
  const std::string text = listing(update, nx::zeros(nx::float64, {3}), nx::zeros(nx::float64, {3}));
  INFO(text);
  CHECK(count(text, "; in place of t1 or t0") == 1);  // (an argument's, only when it is donated)
  auto step = rune::jit(update);
  const Tensor g = nx::create(nx::float64, {3}, {2., 4., 6.});

  Tensor w = nx::create(nx::float64, {3}, {1., 1., 1.});
  const Tensor kept = step(w, g);  // not donated: a fresh buffer, w unchanged
  CHECK(test::text(w) == "float64 [3] [1, 1, 1]");
  const Tensor taken = step(nx::donate(w), g);
  CHECK(same_bits(taken, kept));
  CHECK_THROWS_WITH(nx::to_vector<double>(w), "nx::to_vector: float64 [3] was donated to rune::jit");
  Tensor again = step(nx::donate(taken), g);  // the result donated in turn
  CHECK(test::text(again) == "float64 [3] [-1, -3, -5]");
  // The buffer itself, from nx's pools, is the result's (one of at most
  // 64 bytes lives inside its storage: its elements move with it).
  Tensor wide = nx::full(nx::float64, {16}, 1.);
  const void* buffer = wide.impl()->storage->data;
  const Tensor fresh = step(wide, nx::full(nx::float64, {16}, 2.));
  CHECK(fresh.impl()->storage->data != buffer);
  const Tensor in_place = step(nx::donate(wide), nx::full(nx::float64, {16}, 2.));
  CHECK(in_place.impl()->storage->data == buffer);
  CHECK(step(nx::donate(in_place), nx::full(nx::float64, {16}, 2.)).impl()->storage->data == buffer);

  // Viewed by another argument (or a constant of the function), the buffer is not taken.
  Tensor v = nx::create(nx::float64, {3}, {1., 1., 1.});
  const Tensor both = step(nx::donate(v), v);
  CHECK(test::text(both) == "float64 [3] [0.5, 0.5, 0.5]");
  auto with_constant = rune::jit([c = nx::create(nx::float64, {3}, {3., 3., 3.})](const Tensor& w) {
    return std::pair{w - c * 0.5, c};
  });
  const Tensor c = with_constant(nx::ones(nx::float64, {3})).second;
  CHECK(test::text(with_constant(nx::donate(c)).first) == "float64 [3] [1.5, 1.5, 1.5]");
  CHECK(test::text(with_constant(nx::ones(nx::float64, {3})).second) == "float64 [3] [3, 3, 3]");

  // Carried into a scan (and read after it), a donated argument is the call's value: the step never takes it.
  auto carried = rune::jit([](const Tensor& w, const Tensor& rows) {
    const auto [last, ys] = rune::scan([](const Tensor& c, const Tensor& row) { return std::pair{nx::tanh(c) + row, nx::sum(c)}; }, w, rows);
    return std::pair{last + nx::exp(w), ys};
  });
  const Tensor rows = nx::ones(nx::float64, {2, 3});
  const auto expected = carried(nx::create(nx::float64, {3}, {1., 2., 3.}), rows);
  const auto got = carried(nx::donate(nx::create(nx::float64, {3}, {1., 2., 3.})), rows);
  CHECK(same_bits(got.first, expected.first));
  CHECK(same_bits(got.second, expected.second));
}

TEST_CASE("scans read rows in place, stack their results, and move the carry through a copy") {
  // The carry swaps its two halves each row; a y is the carry received.
  auto f = [](const Tensor& a, const Tensor& b, const Tensor& rows) {
    return rune::scan([](const std::pair<Tensor, Tensor>& c, const Tensor& row) {
      return std::pair{std::pair{c.second + row, c.first}, std::pair{c.first, nx::sum(row)}};
    }, std::pair{a, b}, rows);
  };
  const Tensor a = nx::create(nx::float64, {2}, {1., 2.}), b = nx::create(nx::float64, {2}, {10., 20.});
  for (std::int64_t rows : {1, 4}) {
    INFO(rows << " rows");
    const Tensor xs = nx::reshape(nx::linspace(nx::float64, 0., 1., rows * 2), {rows, 2});
    same_on_both(*compiled(f, a, b, xs), {a, b, xs});
  }
  auto scalars = [](const Tensor& a, const Tensor& b, const Tensor& xs) {
    return rune::scan([](const std::pair<Tensor, Tensor>& c, const Tensor& x) {
      return std::pair{std::pair{c.second * x, c.first}, c.second};
    }, std::pair{a, b}, xs);
  };
  const Tensor x0 = nx::scalar(nx::float32, 2.f), y0 = nx::scalar(nx::float32, 3.f);
  const Tensor column = nx::slice(nx::reshape(nx::linspace(nx::float32, 1., 2., 10), {5, 2}), {0, 1}, {5, 2});
  same_on_both(*compiled(scalars, x0, y0, nx::reshape(column, {5})), {x0, y0, nx::reshape(column, {5})});
}

TEST_CASE("cond, iterate and remat run as compiled sub-codes") {
  auto f = [](const Tensor& x) {
    Tensor y = rune::cond(nx::greater(nx::sum(x), nx::scalar(nx::float64, 0.)), [&] { return x * 2.; },
                          [&] { return -x; });
    Tensor z = rune::remat([](const Tensor& v) { return nx::sin(v) * v; })(y);
    return rune::iterate(100, [](const Tensor& c) { return nx::greater(nx::max(c), nx::scalar(nx::float64, 10.)); },
                         [](const Tensor& c) { return c * 1.5; }, z);
  };
  for (double sign : {1., -1.}) {
    const Tensor x = nx::create(nx::float64, {2}, {sign, 2. * sign});
    const std::string text = listing(f, x);
    INFO(text);
    CHECK(count(text, "  cond ") == 1);
    CHECK(count(text, "  iterate ") == 1);
    CHECK(count(text, "  body ") == 1);
    same_on_both(*compiled(f, x), {x});
  }
}

TEST_CASE("an eager construct is compiled once per structure; one holding C++ code each time") {
  using rune::vm::shared_builds;
  auto decay = [](const Tensor& x, std::int64_t rows) {
    return rune::scan([](const Tensor& c) { return std::pair{c * 0.5 + 1., std::tuple<>{}}; }, x, rows).first;
  };
  const Tensor x = nx::scalar(nx::float64, 3.);
  const Tensor first = decay(x, 7);
  const auto before = shared_builds();
  CHECK(same_bits(decay(x, 7), first));
  CHECK(same_bits(decay(nx::scalar(nx::float64, 3.), 7), first));  // (a new trace of the same step: an equal program)
  CHECK(shared_builds().built == before.built);
  CHECK(shared_builds().found == before.found + 2);
  (void)decay(x, 8);  // another length: another program
  (void)decay(nx::scalar(nx::float32, 3.f), 7);  // another type
  CHECK(shared_builds().built == before.built + 2);
  int called = 0;
  auto with_callback = [&](const Tensor& c) {
    return std::pair{rune::callback([&](const Tensor& v) { return ++called, v; }, c, c * 0.5), std::tuple<>{}};
  };
  const auto built = shared_builds().built;
  for (int k = 0; k < 3; ++k) (void)rune::scan(with_callback, x, 2);
  CHECK(shared_builds().built == built + 3);
  CHECK(called == 6);
}

TEST_CASE("an iterate that does not stop raises its error on the VM") {
  auto f = [](const Tensor& x) {
    return rune::iterate(3, [](const Tensor& c) { return nx::greater(c, nx::scalar(nx::float64, 1e9)); },
                         [](const Tensor& c) { return c + 1.; }, x);
  };
  const Tensor x = nx::scalar(nx::float64, 0.);
  std::string reference;
  try {
    rune::ir::evaluate(rune::program(f, x).ir(), std::vector<Tensor>{x});
  } catch (const std::invalid_argument& e) {
    reference = e.what();
  }
  CHECK_THAT(reference, StartsWith("rune::iterate: "));
  CHECK_THROWS_WITH(rune::jit(f)(x), reference);
}

TEST_CASE("a failing check on the VM throws when the call returns: what follows runs, the first failure wins") {
  // (the reference interpreter throws where the check fails)
  auto make = [](std::string what) {
    return [what](const nx::Index&, const Tensor& bad) {
      return std::make_exception_ptr(std::runtime_error(what + ": " + nx::to_string(bad)));
    };
  };
  int after = 0;
  auto f = rune::jit([&](const Tensor& v) {
    nx::check(nx::greater(v, 0.), v, make("positive"));
    nx::check(nx::less(v, 10.), v, make("small"));
    return rune::callback([&](const Tensor& t) { ++after; return t; }, v, nx::log(v));
  });
  CHECK_THROWS_WITH(f(nx::create(nx::float64, {3}, {1., -1., 20.})), "positive: float64 [] -1");
  CHECK(after == 1);  // the callback after the failed checks ran
  CHECK_THROWS_WITH(f(nx::create(nx::float64, {2}, {1., 20.})), "small: float64 [] 20");
  CHECK(test::text(f(nx::create(nx::float64, {2}, {1., 1.}))) == "float64 [2] [0, 0]");

  // In a scan every row runs; the first row's failure is thrown.
  int rows = 0;
  auto scanned = rune::jit([&](const Tensor& xs) {
    auto step = [&](const Tensor& c, const Tensor& x) {
      nx::check(nx::greater(x, 0.), x, make("row"));
      return std::pair{c + rune::callback([&](const Tensor& t) { ++rows; return t; }, x, x), c};
    };
    return rune::scan(step, nx::scalar(nx::float64, 0.), xs).first;
  });
  CHECK_THROWS_WITH(scanned(nx::create(nx::float64, {4}, {1., -2., -3., 4.})), "row: float64 [] -2");
  CHECK(rows == 4);

  // An error raised after a failed check gives way to the check's.
  auto then_fails = rune::jit([&](const Tensor& v) {
    nx::check(nx::greater(v, 0.), v, make("positive"));
    return rune::callback([](const Tensor&) -> Tensor { throw std::runtime_error("later"); }, v, v);
  });
  CHECK_THROWS_WITH(then_fails(nx::create(nx::float64, {1}, {-1.})), "positive: float64 [] -1");
  CHECK_THROWS_WITH(then_fails(nx::create(nx::float64, {1}, {1.})), "later");
}

TEST_CASE("reads and writes name every register an instruction touches, from its operands or its side table") {
  using rune::vm::Location;
  auto f = [](const Tensor& x, const Tensor& y) {
    return std::pair{nx::exp(x) * y + 1., nx::get(x, 1) * nx::get(x, 2)};
  };
  const Tensor x = nx::linspace(nx::float64, 0., 1., 6);
  auto code = compiled(f, x, nx::scalar(nx::float64, 2.));
  INFO(rune::vm::listing(*code));
  int kernels = 0, loads = 0, muls = 0;
  for (const rune::vm::Instruction& in : code->instructions) {
    const auto reads = rune::vm::reads(*code, in);
    const auto writes = rune::vm::writes(*code, in);
    if (in.op == rune::vm::Op::fused) {  // (x in memory, y in a scalar register; the kernel's result)
      ++kernels;
      CHECK(std::count(reads.begin(), reads.end(), Location{false, code->params[0].index}) == 1);
      CHECK(std::count(reads.begin(), reads.end(), code->params[1]) == 1);
      CHECK(writes.size() == 1);
    } else if (in.op == rune::vm::Op::load) {
      ++loads;
      CHECK(reads.size() == 1);  // (a tensor register; b is an element's number)
      CHECK_FALSE(reads[0].scalar);
      CHECK(writes.size() == 1);
      CHECK(writes[0].scalar);
    } else if (in.op == rune::vm::Op::mul_f64) {
      ++muls;
      CHECK(reads.size() == 2);
      CHECK(writes.size() == 1);
    }
  }
  CHECK(kernels == 1);
  CHECK(loads == 2);
  CHECK(muls == 1);
  CHECK(rune::vm::operand(rune::vm::Op::load, 2) == rune::vm::Operand::number);
  CHECK(rune::vm::operand(rune::vm::Op::box, 0) == rune::vm::Operand::tensor);
  CHECK(rune::vm::operand(rune::vm::Op::call, 1) == rune::vm::Operand::none);
}

TEST_CASE("the verifier refuses a code reading a register before it is written, past the registers or the tables") {
  using Catch::Matchers::StartsWith;
  auto f = [](const Tensor& x) { return nx::get(x, 0) * nx::get(x, 1) + nx::sum(nx::exp(x)); };
  const Tensor x = nx::linspace(nx::float64, 0., 1., 6);
  const rune::vm::Code good = *compiled(f, x);
  REQUIRE_NOTHROW(rune::vm::verify(good));
  std::size_t mul = 0;
  while (good.instructions[mul].op != rune::vm::Op::mul_f64) ++mul;
  rune::vm::Code early = good;  // (the product read before the loads write its operands)
  std::rotate(early.instructions.begin(), early.instructions.begin() + long(mul), early.instructions.begin() + long(mul) + 1);
  CHECK_THROWS_WITH(rune::vm::verify(early), StartsWith("vm::verify: instruction 0 (mul_f64) reads s"));
  rune::vm::Code past = good;
  past.instructions[mul].a = std::int32_t(good.scalars.size());
  CHECK_THROWS_WITH(rune::vm::verify(past), StartsWith("vm::verify: instruction " + std::to_string(mul) +
                                                       " (mul_f64) names s" + std::to_string(good.scalars.size()) +
                                                       ", past the code's registers"));
  rune::vm::Code table = good;
  std::size_t kernel = 0;
  while (table.instructions[kernel].op != rune::vm::Op::fused) ++kernel;
  table.instructions[kernel].aux = 7;
  CHECK_THROWS_WITH(rune::vm::verify(table), StartsWith("vm::verify: instruction " + std::to_string(kernel) +
                                                        " (fused) indexes entry 7 of a table of 1"));
  rune::vm::Code unwritten = good;
  unwritten.results[0] = {true, std::int32_t(good.scalars.size()) - 1};
  unwritten.constants.clear();
  unwritten.instructions.clear();
  CHECK_THROWS_WITH(rune::vm::verify(unwritten), StartsWith("vm::verify: the results name s"));
}

TEST_CASE("the trace line shows the instruction and the registers it wrote") {
  auto code = compiled([](const Tensor& a, const Tensor& b) { return a * b + a; }, nx::scalar(nx::float64, 3.),
                       nx::scalar(nx::float64, 2.));
  rune::vm::Frame frame = rune::vm::start(*code, std::vector<Tensor>{nx::scalar(nx::float64, 3.), nx::scalar(nx::float64, 2.)});
  rune::vm::execute(*code, frame, 0, 1);
  CHECK(rune::vm::trace_line(*code, code->instructions[0], frame) == "mul_f64    s2 = s0 s1  ; s2 = float64 [] 6");
  rune::vm::execute(*code, frame, 1, 2);
  CHECK(test::text(rune::vm::results(*code, frame)[0]) == "float64 [] 9");
}

TEST_CASE("a run of compiled code, and a compiled call, allocate nothing in their steady state") {
  if (!test::counting) return;  // (AddressSanitizer builds)
  auto code = compiled(chain, nx::zeros(nx::float64, {4}));
  const std::vector<Tensor> args{nx::linspace(nx::float64, -1., 1., 4)};
  for (int i = 0; i < 3; ++i) (void)rune::vm::run(*code, args);  // (pools and block buffers fill)
  const long before = test::allocations.load();
  for (int i = 0; i < 100; ++i) (void)rune::vm::run(*code, args);
  // (the results come from nx's pools, in a small vector of their own)
  CHECK(test::allocations.load() - before == 0);
  auto compiled = rune::jit(chain);
  for (int i = 0; i < 3; ++i) (void)compiled(args[0]);
  const long then = test::allocations.load();
  for (int i = 0; i < 100; ++i) (void)compiled(args[0]);
  CHECK(test::allocations.load() - then == 0);  // a compiled call too (its fast path)
}

TEST_CASE("a code knows whether its results may share an argument's storage, and whether it may check") {
  const Tensor x = nx::linspace(nx::float64, -1., 1., 4);
  auto storage = [](const Tensor& t) { return t.impl()->storage.get(); };
  // Results computed into planned buffers never share storage: a compiled
  // call returns them as they are; a scalar result is boxed in a new tensor.
  CHECK(compiled(chain, x)->results_apart);
  CHECK(compiled([](const Tensor& v) { return nx::sum(v * v); }, x)->results_apart);
  CHECK(compiled([](const Tensor& v) { return v * 2.; }, nx::scalar(nx::float64, 1.))->results_apart);
  // An argument returned as it is, a view of it, or a constant may: a
  // compiled call copies them.
  const Tensor c = nx::ones(nx::float64, {4});
  auto same = [](const Tensor& v) { return v; };
  auto viewed = [](const Tensor& v) { return nx::reshape(v, {2, 2}); };
  auto constant = [&](const Tensor&) { return c; };
  CHECK_FALSE(compiled(same, x)->results_apart);
  CHECK_FALSE(compiled(viewed, x)->results_apart);
  CHECK_FALSE(compiled(constant, x)->results_apart);
  CHECK(storage(rune::jit(same)(x)) != storage(x));
  CHECK(storage(rune::jit(viewed)(x)) != storage(x));
  CHECK(storage(rune::jit(constant)(x)) != storage(c));
  CHECK(test::text(rune::jit(viewed)(x)) == test::text(nx::reshape(x, {2, 2})));
  // Only a code that may reach a check runs in a check scope.
  CHECK_FALSE(compiled(chain, x)->may_check);
  auto checked = [](const Tensor& v) {
    nx::check(nx::greater(v, -2.), v, [](const nx::Index&, const Tensor&) {
      return std::make_exception_ptr(std::runtime_error("low"));
    });
    return v + 1.;
  };
  CHECK(compiled(checked, x)->may_check);
  auto scanned = [&](const Tensor& xs) {
    return rune::scan([&](const Tensor& carry, const Tensor& row) { return std::pair{checked(carry + row), row}; },
                      nx::scalar(nx::float64, 0.), xs).first;
  };
  CHECK(compiled(scanned, x)->may_check);
}

namespace {

// Values of a dtype with its edges: signs, zeros, large and non-finite
// elements (as the dtype holds them).
Tensor edges(nx::DType dtype, std::int64_t n) {
  const double pick[] = {-3.5, -1., -0., 0., 0.5, 1., 2.5, 7., 1e30, std::nan(""), INFINITY, -INFINITY, 3., -2.};
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(pick[std::size_t(i) % std::size(pick)] * (1 + double(i / 14)));
  if (nx::is_integer(dtype) || dtype == nx::bool_)
    for (double& x : v) x = std::isfinite(x) && std::fabs(x) < 1e9 ? x : 5.;
  return nx::create(dtype, {n}, std::span<const double>(v));
}

// The operands of p on `dtype`: `n` elements each, or 0-d (n = 0).
std::vector<Tensor> operands(nx::ops::Prim p, nx::DType dtype, std::int64_t n) {
  const nx::ops::Family family = nx::ops::info(p).family;
  const int arity = nx::ops::info(p).arity;
  std::vector<Tensor> out;
  for (int k = 0; k < arity; ++k) {
    const bool condition = family == nx::ops::Family::select && k == 0;
    Tensor t = edges(condition ? nx::bool_ : dtype, std::max<std::int64_t>(n, 1) + k * 3);
    t = nx::slice(t, {k * 3}, {k * 3 + std::max<std::int64_t>(n, 1)});
    out.push_back(n == 0 ? nx::reshape(t, {}) : t);
  }
  return out;
}

}  // namespace

TEST_CASE("every elementwise primitive gives the reference interpreter's bits on scalars and in a fused kernel") {
  using nx::ops::Family;
  int programs = 0;
  for (int i = 0; i < nx::ops::prim_count; ++i) {
    const auto p = nx::ops::Prim(i);
    const nx::ops::PrimInfo& I = nx::ops::info(p);
    if (I.family != Family::unary && I.family != Family::binary && I.family != Family::select &&
        I.family != Family::convert)
      continue;
    for (int d = 0; d < nx::dtype_count; ++d) {
      const auto dtype = nx::DType(d);
      if (!(I.accepts & nx::ops::dtype_class(dtype))) continue;
      for (int to = 0; to < (I.family == Family::convert ? nx::dtype_count : 1); ++to) {
        nx::ops::Params params;
        params.dtype = nx::DType(to);
        INFO(I.name << " on " << nx::name(dtype) << (I.family == Family::convert ? " to " : "")
                    << (I.family == Family::convert ? nx::name(params.dtype) : ""));
        auto apply = [&](const std::vector<Tensor>& in) { return nx::ops::bind(p, in, params); };
        // Twice over, so a tensor program is a kernel of two steps.
        auto twice = [&](const std::vector<Tensor>& in) {
          const Tensor r = apply(in);
          return nx::where(nx::isnan(r), r, r);
        };
        for (std::int64_t n : {0, 37}) {
          const std::vector<Tensor> args = operands(p, dtype, n);
          const rune::Program program = n == 0 ? rune::program(apply, args) : rune::program(twice, args);
          same_on_both(program.code(), args);
          ++programs;
        }
      }
    }
  }
  CHECK(programs > 400);
}

// Run by the suite with RUNE_VM_TRACE=1 (test_vm_trace): the VM prints each
// instruction it executes on stderr. Without the variable it prints nothing.
TEST_CASE("RUNE_VM_TRACE prints every instruction executed, with what it wrote", "[trace]") {
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  auto code = compiled([](const Tensor& a, const Tensor& b) { return a * b + a; }, nx::scalar(nx::float64, 3.),
                       nx::scalar(nx::float64, 2.));
  (void)rune::vm::run(*code, std::vector<Tensor>{nx::scalar(nx::float64, 3.), nx::scalar(nx::float64, 2.)});
  std::cerr.rdbuf(saved);
  const char* trace = std::getenv("RUNE_VM_TRACE");
  if (trace && std::atoi(trace) != 0)
    CHECK(captured.str() == "vm: mul_f64    s2 = s0 s1  ; s2 = float64 [] 6\n"
                            "vm: add_f64    s3 = s2 s0  ; s3 = float64 [] 9\n");
  else
    CHECK(captured.str().empty());
}

TEST_CASE("docs/vm.md's opcode table names every opcode") {
  std::ifstream page(std::string(RUNE_DOCS_DIR) + "/vm.md");
  REQUIRE(page);
  std::stringstream text;
  text << page.rdbuf();
  for (const char* name : {
#define OP(name, operands, table, tier, meaning) #name,
#include "vm/opcodes.def"
#undef OP
       }) {
    INFO(name);
    std::string quoted = "`";
    quoted.append(name).append("`");
    CHECK(text.str().find(quoted) != std::string::npos);
  }
}

TEST_CASE("an element taken from a tensor is loaded into a scalar register, without a reshape") {
  auto f = [](const Tensor& v) { return nx::get(v, 1) * nx::get(v, 2); };
  const Tensor v = nx::create(nx::float64, {3}, {1.5, -2., 4.});
  const std::string text = listing(f, v);
  INFO(text);
  CHECK(count(text, "reshape") == 0);
  CHECK(count(text, "  load ") == 2);
  same_on_both(*compiled(f, v), {v});
  const Tensor strided = nx::slice(nx::create(nx::float64, {6}, {0., 1.5, 0., -2., 0., 4.}), {1}, {6}, {2});
  same_on_both(*compiled(f, strided), {strided});
}
