// Golden program texts: traces of small functions, before and after the
// passes, compared with tests/golden/*.txt, and read back by the parser;
// their bytecode listings (*.bytecode.txt) and the machine code of their
// loops (*.native.txt), and their results on the VM against the reference
// interpreter's, bit for bit.
// RUNE_UPDATE_GOLDEN=1 rewrites the files from what the code prints now.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "helpers.hpp"
#include "ops/kernels/kernels.hpp"
#include "ir/passes/pipeline.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"
#include "ir/eval.hpp"
#include "vm/compile.hpp"
#include "vm/listing.hpp"
#include "vm/machine.hpp"
#include <rune/rune.hpp>

using nx::Tensor;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compares `text` with the golden file, or rewrites the file when asked.
void golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(RUNE_GOLDEN_DIR) + "/" + name + ".txt";
  const char* update = std::getenv("RUNE_UPDATE_GOLDEN");
  if (update && std::atoi(update) != 0) {
    std::ofstream(path) << text;
    return;
  }
  INFO("golden file " << path << " (RUNE_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(read(path) == text);
}

struct Example {
  std::string name;
  std::function<rune::Program()> trace;
};

Tensor v4() { return nx::create(nx::float64, {4}, {1., 2., 3., 4.}); }

// A program lists its operations in the order they ran, and the order in
// which a call's arguments run is the platform's (GCC computes them right
// to left on x86-64, left to right on 64-bit ARM): where two arguments of
// one call both trace operations, the examples compute one of them in a
// statement before, in the order the golden texts record.

std::vector<Example> examples() {
  return {
      {"cumulative_squares",
       [] {
         return rune::program(
             [](const Tensor& v) {
               return rune::scan([](const Tensor& acc, const Tensor& row) {
                        Tensor next = acc + row * row;
                        return std::pair{next, next};
                      },
                                 nx::scalar(nx::float64, 0.), v)
                   .second;
             },
             v4());
       }},
      {"elementwise_chain",
       [] {
         return rune::program(
             [](const Tensor& x) {
               const Tensor decay = nx::exp(-x * x);
               return nx::tanh(x * 2. + 1.) * x - decay;
             },
             v4());
       }},
      {"common_and_dead",
       [] {
         return rune::program(
             [](const Tensor& x) {
               Tensor unused = nx::sin(x);
               (void)unused;
               const Tensor fourth = nx::sum(x * 2.), third = nx::sum(x * 2.);
               const Tensor second = nx::exp(x), first = nx::exp(x);
               return first + second + third + fourth;
             },
             v4());
       }},
      {"float32_activations",  // (exp and tanh in a block loop's registers, where a machine emits them)
       [] {
         return rune::program(
             [](const Tensor& x) {
               const Tensor decay = nx::exp(-x);
               return nx::tanh(x) * decay;
             },
             nx::create(nx::float32, {4}, {-1., 0.5, 2., 90.}));
       }},
      {"layout_and_reductions",
       [] {
         return rune::program(
             [](const Tensor& m) {
               Tensor t = nx::transpose(nx::reshape(m, {2, 2}));
               Tensor p = nx::pad(nx::slice(t, {0, 1}, {2, 2}), {{1, 0}, {0, 1}}, -1.);
               return std::pair{nx::max(p, {1}), nx::cast(nx::argmax(p, 0), nx::float64)};
             },
             v4());
       }},
      {"scan_with_capture",
       [] {
         return rune::program(
             [](const Tensor& xs, const Tensor& w) {
               auto [total, rows] = rune::scan(
                   [&](const std::pair<Tensor, Tensor>& c, const Tensor& row) {
                     return std::pair{std::pair{c.first + row * w, c.second * 2.}, nx::sum(row)};
                   },
                   std::pair{nx::zeros(nx::float64, {2}), nx::scalar(nx::float64, 1.)}, xs);
               return std::tuple{total.first, total.second, rows};
             },
             nx::ones(nx::float64, {3, 2}), nx::ones(nx::float64, {2}));
       }},
      {"spring_forces",
       [] {
         return rune::program(
             [](const Tensor& p) {
               const Tensor a = nx::create(nx::int32, {4}, {0, 1, 2, 0}), b = nx::create(nx::int32, {4}, {1, 2, 0, 2});
               const Tensor from = nx::take(p, a, 0);
               const Tensor d = nx::take(p, b, 0) - from;
               const Tensor len = nx::sqrt(nx::sum(d * d, {1}, true));
               const Tensor direction = d / len;
               return nx::segment_sum((len - 1.) * direction, a, 3);
             },
             nx::reshape(nx::linspace(nx::float64, -1., 1., 6), {3, 2}));
       }},
      {"newton_iterate",
       [] {
         return rune::program(
             [](const Tensor& a) {
               auto until = [a](const Tensor& x) { return nx::less(nx::abs(x * x - a), 1e-12); };
               auto step = [a](const Tensor& x) {
                 const Tensor slope = 2. * x;
                 return x - (x * x - a) / slope;
               };
               return rune::iterate(50, until, step, a);
             },
             nx::scalar(nx::float64, 2.));
       }},
  };
}

}  // namespace

TEST_CASE("traced programs print as their golden texts, before and after the passes") {
  for (const Example& e : examples()) {
    INFO(e.name);
    rune::Program p = e.trace();
    rune::ir::verify(p.ir());
    golden(e.name, rune::to_string(p));
    rune::ir::Program simplified = rune::ir::simplify(p.ir());
    rune::ir::verify(simplified);
    golden(e.name + ".simplified", rune::ir::print(simplified));
  }
}

TEST_CASE("every golden program reads back to an equal program") {
  for (const Example& e : examples()) {
    INFO(e.name);
    for (const std::string& name : {e.name, e.name + ".simplified"}) {
      std::string text = read(std::string(RUNE_GOLDEN_DIR) + "/" + name + ".txt");
      rune::ir::Program parsed = rune::ir::parse(text);
      rune::ir::verify(parsed);
      CHECK(rune::ir::print(parsed) == text);
      CHECK(rune::ir::equal(rune::ir::parse(rune::ir::print(parsed)), parsed));
    }
  }
}

std::vector<Tensor> arguments_of(const rune::ir::Program& p) {
  std::vector<Tensor> args;
  for (int v : p.params) {
    const auto& t = p.types[std::size_t(v)];
    args.push_back(nx::reshape(nx::arange(t.dtype, 0, double(nx::numel(t.shape))) * 0.25, t.shape));
  }
  return args;
}

TEST_CASE("a simplified program computes what the traced one does") {
  for (const Example& e : examples()) {
    INFO(e.name);
    rune::Program p = e.trace();
    rune::Program s(std::make_shared<rune::ir::Program>(rune::ir::simplify(p.ir())));
    std::vector<Tensor> args = arguments_of(p.ir());
    std::vector<Tensor> a = rune::run(p, args), b = rune::run(s, args);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(nx::to_string(a[i]) == nx::to_string(b[i]));
  }
}

TEST_CASE("golden programs' loops of scalars compile to their golden machine code") {
  // (a build without the tier has no machine code to list; RUNE_NATIVE=off says so first)
  if (!rune::vm::native::built() || rune::vm::native::mode() == rune::vm::native::Mode::off) return;
#if defined(__aarch64__)
  const std::string machine = ".a64";  // (the x86-64 listings' names have none)
#else
  const std::string machine;
  // (an elementwise kernel's block loop is in the vector registers of the
  // SIMD level: the listings are SSE2's, which every x86-64 has)
  if (std::string_view(nx::ops::kernels::table().arch) != "sse2") {
    WARN("x86-64's golden machine code is SSE2's: run with RUNE_SIMD=sse2 (as the suite does)");
    return;
  }
#endif
  for (const Example& e : examples()) {
    INFO(e.name);
    auto simplified = std::make_shared<const rune::ir::Program>(rune::ir::simplify(e.trace().ir()));
    golden(e.name + machine + ".native", rune::vm::native_listing(*rune::vm::compile(simplified)));
  }
}

TEST_CASE("golden programs compile to their golden bytecode, which gives the reference interpreter's bits") {
  for (const Example& e : examples()) {
    INFO(e.name);
    auto simplified = std::make_shared<const rune::ir::Program>(rune::ir::simplify(e.trace().ir()));
    auto code = rune::vm::compile(simplified);
    golden(e.name + ".bytecode", rune::vm::listing(*code));
    std::vector<Tensor> args = arguments_of(*simplified);
    const rune::vm::Values on_vm = rune::vm::run(*code, args);
    std::vector<Tensor> reference = rune::ir::evaluate(*simplified, args);
    REQUIRE(on_vm.size() == reference.size());
    for (std::size_t i = 0; i < on_vm.size(); ++i) CHECK(test::same_bits(on_vm[i], reference[i]));
  }
}
