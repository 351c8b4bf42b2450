// Program text read back: printed programs parse to equal programs that
// print the same text, and malformed texts fail naming line and column.
#include "helpers.hpp"
#include <rune/nx.hpp>

#include "ir/program.hpp"
#include "ir/text.hpp"
#include "ir/trace.hpp"

using namespace rune::ir;

namespace {

TensorType type(nx::DType dtype, const nx::Shape& shape) { return {dtype, shape, nx::Placement::host()}; }

// Builds a program canonically numbered (parameters, then each equation's
// outputs in order), with output types from the primitives' rules.
struct Builder {
  Program p;

  int param(const TensorType& t) {
    int v = p.add_value(t);
    p.params.push_back(v);
    return v;
  }
  int constant(const nx::Tensor& t) {
    Equation eq;
    eq.kind = OpKind::constant;
    eq.constant = t;
    eq.outputs = {p.add_value(nx::ops::type_of(t))};
    p.equations.push_back(eq);
    return eq.outputs[0];
  }
  int prim(Prim prim, std::vector<int> inputs, const Params& params = {}) {
    std::vector<nx::Tensor> handles;
    for (int v : inputs) handles.push_back(type_only(p.types[std::size_t(v)]));
    Equation eq;
    eq.prim = prim;
    eq.params = params;
    eq.inputs = std::move(inputs);
    eq.outputs = {p.add_value(nx::ops::rules(prim).type(prim, handles, params))};
    p.equations.push_back(eq);
    return eq.outputs[0];
  }
  std::vector<int> scan(std::int64_t length, int carry, int xs, const Program& step, std::vector<int> inputs) {
    Equation eq;
    eq.kind = OpKind::scan;
    eq.info = ScanInfo{length, carry, xs};
    eq.programs = {std::make_shared<const Program>(step)};
    eq.inputs = std::move(inputs);
    std::vector<TensorType> in;
    for (int v : eq.inputs) in.push_back(p.types[std::size_t(v)]);
    for (const TensorType& t : construct_output_types(eq, in)) eq.outputs.push_back(p.add_value(t));
    p.equations.push_back(eq);
    return eq.outputs;
  }
  Program done(std::vector<int> results) {
    p.results = std::move(results);
    return p;
  }
};

void check_round_trip(const Program& p) {
  const std::string text = print(p);
  INFO(text);
  Program again = parse(text);
  CHECK(equal(p, again));
  CHECK(print(again) == text);
}

Params axes(nx::Axes a) {
  Params p;
  p.axes = std::move(a);
  return p;
}

}  // namespace

TEST_CASE("parse: constants of several dtypes read back bit for bit") {
  Builder b;
  b.constant(nx::scalar(nx::float64, -0.1));
  b.constant(nx::scalar(nx::float32, 3.5));
  b.constant(nx::scalar(nx::bool_, 1));
  b.constant(nx::scalar(nx::int64, -2));
  b.constant(nx::scalar(nx::complex128, 2));
  b.constant(nx::create(nx::int32, {3}, {1, -2, 300000}));
  b.constant(nx::create(nx::float64, {2, 2}, {1.5, -0.0, 1e300, 7}));
  b.constant(nx::create(nx::bool_, {2}, {1, 0}));
  b.constant(nx::zeros(nx::float16, {0}));
  Program p = b.done({0, 5, 6});
  CHECK_THAT(print(p), Catch::Contains("= Map [int64:0xfffffffffffffffe] at CPU"));
  CHECK_THAT(print(p), Catch::Contains("= constant [0x00000001, 0xfffffffe, 0x000493e0]"));
  check_round_trip(p);
}

TEST_CASE("parse: elementwise Map equations") {
  Builder b;
  int x = b.param(type(nx::float64, {2, 3}));
  int y = b.param(type(nx::float64, {3}));
  int sum = b.prim(Prim::add, {x, y});
  int neg = b.prim(Prim::neg, {sum});
  int less = b.prim(Prim::less, {neg, y});
  int chosen = b.prim(Prim::select, {less, x, neg});
  Params to_f32;
  to_f32.dtype = nx::float32;
  int narrow = b.prim(Prim::convert, {chosen}, to_f32);
  Params to_i8;
  to_i8.dtype = nx::int8;
  int small = b.prim(Prim::convert, {chosen}, to_i8);
  check_round_trip(b.done({narrow, small, less}));
}

TEST_CASE("parse: primitives with parameters") {
  Builder b;
  int x = b.param(type(nx::float32, {2, 3}));
  int y = b.param(type(nx::float32, {4}));
  int e = b.prim(Prim::exp, {x});  // shows x's type
  int s = b.prim(Prim::reduce_sum, {e}, axes({0, 1}));
  Params reshape;
  reshape.shape = {3, 2};
  int r = b.prim(Prim::reshape, {e}, reshape);
  Params slice;
  slice.starts = {1, 0};
  slice.stops = {3, 2};
  slice.steps = {2, 1};
  int sl = b.prim(Prim::slice, {r}, slice);
  Params pad;
  pad.lo = {1, 0};
  pad.hi = {0, 2};
  pad.value = -1.25;
  int pd = b.prim(Prim::pad, {sl}, pad);
  Params concat;
  concat.axis = 1;
  int c = b.prim(Prim::concatenate, {pd, pd, pd}, concat);
  Params arg;
  arg.axis = 1;
  int am = b.prim(Prim::argmax, {c}, arg);
  int z = b.prim(Prim::sqrt, {y});
  int t = b.prim(Prim::transpose, {c}, axes({1, 0}));
  Program p = b.done({s, pd, c, am, z, t});
  CHECK_THAT(print(p), Catch::Contains("pad(%5) lo=[1, 0] hi=[0, 2] value=0xbff4000000000000"));
  check_round_trip(p);
}

TEST_CASE("parse: a parameter's type is shown by a later use") {
  Builder b;
  int x = b.param(type(nx::float64, {4}));
  int s = b.prim(Prim::reduce_max, {x}, axes({0}));  // checked once the Map below shows x's type
  int m = b.prim(Prim::sub, {x, s});
  check_round_trip(b.done({m}));
}

TEST_CASE("parse: scans, with captures and nested") {
  Builder inner;  // carry c, row r, capture k: c + r * k
  int c = inner.param(type(nx::float64, {}));
  int r = inner.param(type(nx::float64, {}));
  int k = inner.param(type(nx::float64, {}));
  int next = inner.prim(Prim::add, {c, inner.prim(Prim::mul, {r, k})});
  Program inner_step = inner.done({next, next});

  Builder outer;  // carry a, row v [3], capture k: scan the row, add its total
  int a = outer.param(type(nx::float64, {}));
  int v = outer.param(type(nx::float64, {3}));
  int k2 = outer.param(type(nx::float64, {}));
  auto rows = outer.scan(3, 1, 1, inner_step, {a, v, k2});
  int total = outer.prim(Prim::add, {rows[0], a});
  Program outer_step = outer.done({total, rows[1]});

  Builder b;
  int x = b.param(type(nx::float64, {2, 3}));
  int w = b.param(type(nx::float64, {}));
  int init = b.constant(nx::scalar(nx::float64, 0));
  int doubled = b.prim(Prim::add, {x, x});
  b.prim(Prim::neg, {w});
  auto out = b.scan(2, 1, 1, outer_step, {init, doubled, w});
  check_round_trip(b.done({out[0], out[1]}));
}

TEST_CASE("parse: a scan's parameter types come from its step") {
  Builder step;
  int c = step.param(type(nx::int32, {}));
  int r = step.param(type(nx::int32, {2}));
  int s = step.prim(Prim::reduce_sum, {step.prim(Prim::abs, {r})}, axes({0}));
  Program body = step.done({step.prim(Prim::add, {c, s})});
  Builder b;
  int x = b.param(type(nx::int32, {5, 2}));
  int init = b.constant(nx::scalar(nx::int32, 7));
  check_round_trip(b.done(b.scan(5, 1, 1, body, {init, x})));
}

TEST_CASE("parse: a scan input's type is shown by a use after the scan") {
  Builder step;  // the row only goes through a reduction: its type shows nowhere in the step
  int c = step.param(type(nx::float32, {}));
  int r = step.param(type(nx::float32, {3}));
  Program body = step.done({step.prim(Prim::reduce_min, {r}, axes({0})), c});
  Builder b;
  int x = b.param(type(nx::float32, {2, 3}));
  int init = b.constant(nx::scalar(nx::float32, 1));
  auto out = b.scan(2, 1, 1, body, {init, x});
  check_round_trip(b.done({out[0], b.prim(Prim::mul, {x, x})}));
}

TEST_CASE("parse: the API's example text") {
  const std::string text = test::api_example_text;
  Program p = parse(text);
  CHECK(print(p) == text);
  REQUIRE(p.types.size() == 4);
  CHECK(p.types[0] == type(nx::float64, {4}));
  CHECK(p.params == std::vector<int>{0});
  CHECK(p.results == std::vector<int>{3});
  REQUIRE(p.equations.size() == 2);
  CHECK(p.equations[1].outputs == std::vector<int>{2, 3});
  CHECK(std::get<ScanInfo>(p.equations[1].info) == ScanInfo{4, 1, 1});
  CHECK(p.equations[1].programs[0]->params == std::vector<int>{0, 1});
}

TEST_CASE("parse: layout is lenient, structure is not") {
  Program p = parse(
      "\n program ( %0 )  \r\n\n"
      "%1 : float64 [ 2 ] at CPU = Map [ neg( x0 ) ] ( x0 : float64 [2] at CPU )\n"
      "\twith x0 = %0\n"
      "     return %1\n\n");
  CHECK(print(p) ==
        "program (%0)\n"
        "  %1 : float64 [2] at CPU = Map [neg(x0)] (x0: float64 [2] at CPU)\n"
        "    with x0 = %0\n"
        "  return %1\n");
}

TEST_CASE("parse: a parameter may be written with its type") {
  Program p = parse(
      "program (%0 : float64 [4] at CPU)\n"
      "  %1 : float64 [] at CPU = reduce_sum(%0) axes=[0]\n"
      "  return %1\n");
  CHECK(p.types[0] == type(nx::float64, {4}));
}

TEST_CASE("parse: malformed texts name the line and column") {
  const std::string head = "program (%0)\n  %1 : float64 [2] at CPU = ";
  const std::string map = "Map [neg(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0\n";
  const std::string tail = "  return %1\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "line 1, column 1: expected 'program', found end of text"},
      {"program %0\n", "line 1, column 9: expected '(', found '%0'"},
      {"program (%0\n", "line 1, column 12: expected ')', found end of line"},
      {"program (%0, %0)\n", "line 1, column 14: redefinition of %0"},
      {"program ()\n  foo\n", "line 2, column 3: expected an equation or 'return', found 'foo'"},
      {"program ()\n", "line 2, column 1: expected an equation or 'return', found end of text"},
      {"program (%0)\n  return %0\n", "line 1, column 10: no use shows the type of %0; write it as '%0 : <type>'"},
      {"program ()\n  return %3\n", "line 2, column 10: undefined value %3"},
      {"program ()\n  return\nprogram ()\n", "line 3, column 1: expected end of text, found 'program'"},
      {head + map + "  return %1 %1\n", "line 4, column 13: expected end of line, found '%1'"},
      {head + "Map [neg(x0)] (x0: float64 [2] at CPU) with x0 = %0\n" + tail,
       "line 2, column 68: expected end of line, found 'with'"},
      {head + "Map [neg(x0)] (x0: float64 [2] at CPU)\n" + tail, "line 3, column 3: expected 'with', found 'return'"},
      {head + "Map [neg(x0)] (x0: float64 [2] at CPU)\n    with x1 = %0\n" + tail,
       "line 3, column 10: expected 'x0', found 'x1'"},
      {head + "Map [neg(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0, x1 = %0\n" + tail,
       "line 3, column 17: expected end of line, found ','"},
      {head + "Map [neg(x0, x1)] (x0: float64 [2] at CPU) (x1: float64 [2] at CPU)\n" + tail,
       "line 2, column 34: neg takes 1 operand, given 2"},
      {head + "Map [add(x0, x1)] (x0: float64 [2] at CPU)\n    with x0 = %0, x1 = %0\n" + tail,
       "line 2, column 71: expected '(', found end of line"},
      {head + "Map [frob(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0\n" + tail,
       "line 2, column 34: unknown primitive 'frob'"},
      {head + "Map [reshape(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0\n" + tail,
       "line 2, column 34: 'reshape' is not elementwise"},
      {head + "Map [convert(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0\n" + tail,
       "line 2, column 41: expected '<', found '('"},
      {head + "Map [neg(x0)] (x0: float65 [2] at CPU)\n    with x0 = %0\n" + tail,
       "line 2, column 48: unknown dtype 'float65'"},
      {head + "Map [neg(x0)] (x0: float64 [2] at GPU)\n    with x0 = %0\n" + tail,
       "line 2, column 63: unknown placement 'GPU'"},
      {head + "Map [neg(x0)] (x0: float64 [-2] at CPU)\n    with x0 = %0\n" + tail,
       "line 2, column 57: expected a size, found '-2'"},
      {head + "Map [neg(x0)] (x0: float64 [2] at CPU)\n    with x0 = %1\n" + tail,
       "line 3, column 15: %1 is not defined in this program before this use"},
      {head + "Map [logical_not(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0\n" + tail,
       "line 2, column 3: %1 is declared float64 [2] at CPU, the equation gives bool [2] at CPU"},
      {"program (%0)\n  %1 : float64 [2] at CPU = Map [neg(x0)] (x0: float64 [2] at CPU)\n    with x0 = %0\n"
       "  %2 : float64 [2] at CPU = Map [neg(x0)] (x0: float64 [3] at CPU)\n    with x0 = %0\n  return %2\n",
       "line 5, column 15: %0 is float64 [2] at CPU, x0 is declared float64 [3] at CPU"},
      {head + "Map [float64:0x00] at CPU\n" + tail, "line 2, column 42: expected 0x and 16 hex digits, found '0x00'"},
      {"program ()\n  %1 : float64 [2] at CPU = Map [float64:0x0000000000000000] at CPU\n" + tail,
       "line 2, column 3: %1 is declared float64 [2] at CPU, the equation gives float64 [] at CPU"},
      {head + "constant [0x0000000000000000]\n" + tail, "line 2, column 57: expected ',', found ']'"},
      {"program (%0)\n  %1 : float64 [2] at CPU, %2 : float64 [2] at CPU = constant []\n  return %1\n",
       "line 2, column 54: a constant gives 1 value, 2 declared"},
      {head + "frob(%0)\n" + tail, "line 2, column 29: unknown primitive 'frob'"},
      {head + "reshape(%0, %0)\n" + tail, "line 2, column 29: reshape takes 1 operand, given 2"},
      {head + "reshape(%0) bogus=[2]\n" + tail, "line 2, column 41: unknown parameter 'bogus'"},
      {head + "reshape(%0) shape=[3]\n" + tail + "",
       "line 1, column 10: no use shows the type of %0; write it as '%0 : <type>'"},
      {"program (%0 : float64 [2] at CPU)\n  %1 : float64 [2] at CPU = reshape(%0) shape=[3]\n" + tail,
       "line 2, column 29: nx::reshape: cannot reshape float64 [2] (2 elements) into [3]"},
      {"program (%0 : float64 [2] at CPU)\n  %1 : float64 [] at CPU = argmax(%0) axis=1\n" + tail,
       "line 2, column 28: nx::argmax: axes [1] are not sorted, distinct axes of float64 [2]"},
      {"program (%0 : float64 [2] at CPU)\n  %1 : float64 [2] at CPU = reshape(%0) shape=[2] value=0x1\n" + tail,
       "line 2, column 57: expected 0x and 16 hex digits, found '0x1'"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    CHECK_THROWS_WITH(parse(text), "rune::parse_program: " + message);
  }
}

TEST_CASE("parse: malformed scans") {
  const std::string head =
      "program (%0 : float64 [4] at CPU)\n  %1 : float64 [] at CPU = Map [float64:0x0000000000000000] at CPU\n";
  const std::string step =
      "    step\n      program (%4, %5)\n"
      "        %6 : float64 [] at CPU = Map [add(x0, x1)] (x0: float64 [] at CPU) (x1: float64 [] at CPU)\n"
      "          with x0 = %4, x1 = %5\n        return %6, %6\n  return %3\n";
  const std::pair<std::string, std::string> cases[] = {
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 3 rows, init (%1), xs (%0), captures ()\n" +
           step,
       "line 3, column 81: %0 is float64 [4] at CPU, not 3 rows"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (%0)\n" + step,
       "line 3, column 84: expected ',', found end of line"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (%0), captures (%1)\n" +
           step,
       "line 3, column 53: rune::scan: the step takes 2 values, the scan gives 3"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (), captures (%0)\n" +
           step,
       "line 7, column 30: %5 is float64 [4] at CPU, x1 is declared float64 [] at CPU"},
      {head + "  %2 : float64 [4] at CPU = scan 4 rows, init (%1), xs (), captures (%0)\n    step\n      program (%3, "
              "%4)\n"
              "        %5 : float64 [4] at CPU = Map [add(x0, x1)] (x0: float64 [] at CPU) (x1: float64 [4] at CPU)\n"
              "          with x0 = %3, x1 = %4\n        return %5\n  return %2\n",
       "line 3, column 29: rune::scan: the step returns carry 0 as float64 [4], it receives float64 []"},
      {head + "  %2 : float64 [] at CPU = scan 4 rows, init (%1), xs (%0), captures ()\n" +
           step.substr(0, step.size() - 3) + "%2\n",
       "line 3, column 28: the equation gives 2 values, 1 declared"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [5] at CPU = scan 4 rows, init (%1), xs (%0), captures ()\n" +
           step,
       "line 3, column 27: %3 is declared float64 [5] at CPU, the equation gives float64 [4] at CPU"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (%0), captures ()\n" +
           "    step\n      program (%4, %1)\n        return %4, %4\n  return %3\n",
       "line 5, column 20: redefinition of %1"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (%0), captures ()\n" +
           "    step\n      program (%4, %5)\n        return %4, %1\n  return %3\n",
       "line 6, column 20: %1 is not defined in this program before this use"},
      {head + "  %2 : float64 [] at CPU, %3 : float64 [4] at CPU = scan 4 rows, init (%1), xs (%0), captures ()\n" +
           "    program (%4, %5)\n",
       "line 4, column 5: expected 'step', found 'program'"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    CHECK_THROWS_WITH(parse(text), "rune::parse_program: " + message);
  }
}
