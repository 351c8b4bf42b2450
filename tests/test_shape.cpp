// Shape functions: reshape, transpose, broadcast_to, expand_dims, squeeze,
// moveaxis, flatten, concatenate, stack, pad, flip, slice, get, take and the
// dynamic slices.
#include "helpers.hpp"
#include <rune/rune.hpp>

using nx::Tensor;
using namespace test;

TEST_CASE("reshape infers one -1 and checks the element count") {
  Tensor a = nx::arange(nx::float64, 0, 6);
  CHECK(nx::reshape(a, {2, -1}).shape() == nx::Shape{2, 3});
  CHECK(text(nx::reshape(a, {3, 2})) == "float64 [3, 2] [[0, 1], [2, 3], [4, 5]]");
  CHECK(text(nx::reshape(nx::transpose(nx::reshape(a, {2, 3})), {6})) == "float64 [6] [0, 3, 1, 4, 2, 5]");
  CHECK_THROWS_WITH(nx::reshape(a, {4}), test::Placed("nx::reshape: cannot reshape float64 [6] (6 elements) into [4]"));
  CHECK_THROWS_WITH(nx::reshape(a, {-1, -1}), test::Placed("nx::reshape: more than one -1 in [-1, -1]"));
  CHECK_THROWS_WITH(nx::reshape(a, {4, -1}), test::Placed("nx::reshape: cannot reshape float64 [6] (6 elements) into [4, -1]"));
}

TEST_CASE("transpose, moveaxis, flatten") {
  Tensor a = nx::reshape(nx::arange(nx::int32, 0, 24), {2, 3, 4});
  CHECK(nx::transpose(a).shape() == nx::Shape{4, 3, 2});
  CHECK(nx::transpose(a, {1, 0, 2}).shape() == nx::Shape{3, 2, 4});
  CHECK(nx::item(nx::transpose(a, {2, 0, 1}), {3, 1, 2}) == nx::item(a, {1, 2, 3}));
  CHECK(nx::moveaxis(a, 0, -1).shape() == nx::Shape{3, 4, 2});
  CHECK(nx::moveaxis(a, -1, 0).shape() == nx::Shape{4, 2, 3});
  CHECK(nx::flatten(a).shape() == nx::Shape{24});
  CHECK_THROWS_WITH(nx::transpose(a, {0, 0, 1}), test::Placed("nx::transpose: [0, 0, 1] is not a permutation of the axes of int32 [2, 3, 4]"));
}

// A transposed view made C order goes by tiles when it is small, by rows
// over oneTBB when it is large (ops/tensor.cpp copy_as): every element in
// its place either way, for every element size, sizes that are not a
// multiple of the tile, batch axes and columns read backwards.
TEST_CASE("a transposed view copied into C order puts every element in its place") {
  struct Case {
    nx::DType dtype;
    std::int64_t batches, rows, cols;
  };
  for (const Case& c : {Case{nx::uint8, 1, 19, 13}, Case{nx::int16, 3, 9, 21}, Case{nx::float32, 2, 256, 128},
                        Case{nx::float64, 1, 4, 5}, Case{nx::complex128, 2, 17, 8}, Case{nx::float32, 1, 400, 400}}) {
    const std::int64_t n = c.batches * c.rows * c.cols;
    INFO(nx::name(c.dtype) << " [" << c.batches << ", " << c.rows << ", " << c.cols << "]");
    const Tensor source = nx::cast(nx::reshape(nx::arange(nx::float64, 0, double(n)), {c.batches, c.cols, c.rows}), c.dtype);
    const Tensor view = nx::transpose(source, {0, 2, 1});  // (b, i, j) is b * cols * rows + j * rows + i
    for (bool backwards : {false, true}) {
      const Tensor flat = nx::reshape(backwards ? nx::flip(view, {2}) : view, {n});
      std::vector<double> got;
      if (c.dtype != nx::complex128) got = values(nx::cast(flat, nx::float64));
      else
        for (std::complex<double> z : nx::to_vector<std::complex<double>>(flat)) got.push_back(z.real());
      std::int64_t wrong = 0;
      for (std::int64_t b = 0; b < c.batches; ++b)
        for (std::int64_t i = 0; i < c.rows; ++i)
          for (std::int64_t j = 0; j < c.cols; ++j) {
            const std::int64_t column = backwards ? c.cols - 1 - j : j;
            wrong += got[std::size_t((b * c.rows + i) * c.cols + j)] != double(b * c.cols * c.rows + column * c.rows + i);
          }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("broadcast_to, expand_dims, squeeze") {
  Tensor v = f64({3}, {1, 2, 3});
  CHECK(text(nx::broadcast_to(v, {2, 3})) == "float64 [2, 3] [[1, 2, 3], [1, 2, 3]]");
  CHECK_THROWS_WITH(nx::broadcast_to(v, {3, 2}), test::Placed("nx::broadcast_to: shape [3] does not broadcast to [3, 2]"));
  CHECK(nx::expand_dims(v, {0}).shape() == nx::Shape{1, 3});
  CHECK(nx::expand_dims(v, {-1}).shape() == nx::Shape{3, 1});
  CHECK(nx::expand_dims(v, {0, 2}).shape() == nx::Shape{1, 3, 1});
  CHECK_THROWS_WITH(nx::expand_dims(v, {3}), StartsWith("nx::expand_dims: axis 3 is out of range"));
  Tensor w = nx::zeros(nx::float64, {1, 3, 1});
  CHECK(nx::squeeze(w).shape() == nx::Shape{3});
  CHECK(nx::squeeze(w, {-1}).shape() == nx::Shape{1, 3});
  CHECK_THROWS_WITH(nx::squeeze(w, {1}), test::Placed("nx::squeeze: axis 1 of float64 [1, 3, 1] has length 3, not 1"));
}

TEST_CASE("concatenate and stack") {
  Tensor a = f64({2, 1}, {1, 2}), b = f64({2, 2}, {3, 4, 5, 6});
  CHECK(text(nx::concatenate({a, b}, 1)) == "float64 [2, 3] [[1, 3, 4], [2, 5, 6]]");
  CHECK(text(nx::concatenate({b, b}, -2)).starts_with("float64 [4, 2]"));
  CHECK_THROWS_WITH(nx::concatenate({a, b}, 0), test::Placed("nx::concatenate: shapes [2, 1] and [2, 2] differ off axis 0"));
  CHECK_THROWS_WITH(nx::concatenate({}, 0), test::Placed("nx::concatenate: no tensors to concatenate"));
  CHECK_THROWS_WITH(nx::concatenate({a, nx::ones(nx::float32, {2, 1})}, 0), StartsWith("nx::concatenate: dtypes"));
  Tensor s = nx::stack({f64({2}, {1, 2}), f64({2}, {3, 4})});
  CHECK(text(s) == "float64 [2, 2] [[1, 2], [3, 4]]");
  CHECK(text(nx::stack({f64({2}, {1, 2}), f64({2}, {3, 4})}, 1)) == "float64 [2, 2] [[1, 3], [2, 4]]");
  CHECK(text(nx::stack({nx::scalar(nx::int32, 1), nx::scalar(nx::int32, 2)})) == "int32 [2] [1, 2]");
  CHECK_THROWS_WITH(nx::stack({a, b}), test::Placed("nx::stack: shapes [2, 1] and [2, 2] differ"));
}

TEST_CASE("pad and flip") {
  Tensor a = f64({2, 2}, {1, 2, 3, 4});
  CHECK(text(nx::pad(a, {{1, 0}, {0, 2}}, 9)) == "float64 [3, 4] [[9, 9, 9, 9], [1, 2, 9, 9], [3, 4, 9, 9]]");
  CHECK_THROWS_WITH(nx::pad(a, {{1, 0}}), StartsWith("nx::pad: expected 2 (before, after) widths"));
  CHECK_THROWS_WITH(nx::pad(a, {{-1, 0}, {0, 0}}), test::Placed("nx::pad: pad widths must not be negative"));
  CHECK(text(nx::flip(a)) == "float64 [2, 2] [[4, 3], [2, 1]]");
  CHECK(text(nx::flip(a, {1})) == "float64 [2, 2] [[2, 1], [4, 3]]");
}

TEST_CASE("slice uses Python slicing per axis; get takes a row") {
  Tensor a = nx::arange(nx::float64, 0, 10);
  CHECK(text(nx::slice(a, {2}, {5})) == "float64 [3] [2, 3, 4]");
  CHECK(text(nx::slice(a, {-3}, {100})) == "float64 [3] [7, 8, 9]");
  CHECK(text(nx::slice(a, {1}, {8}, {3})) == "float64 [3] [1, 4, 7]");
  CHECK(text(nx::slice(a, {5}, {2})) == "float64 [0] []");
  Tensor m = nx::reshape(a, {2, 5});
  CHECK(text(nx::slice(m, {0, 1}, {2, 3})) == "float64 [2, 2] [[1, 2], [6, 7]]");
  CHECK(text(nx::slice(m, {1}, {2})) == "float64 [1, 5] [[5, 6, 7, 8, 9]]");
  CHECK_THROWS_WITH(nx::slice(a, {0}, {5}, {-1}), test::Placed("nx::slice: step -1 along axis 0 is not positive (reverse with nx::flip)"));
  CHECK(text(nx::get(m, 1)) == "float64 [5] [5, 6, 7, 8, 9]");
  CHECK(text(nx::get(m, -2)) == "float64 [5] [0, 1, 2, 3, 4]");
  CHECK(text(nx::get(a, 3)) == "float64 [] 3");
  CHECK_THROWS_WITH(nx::get(m, 2), test::Placed("nx::get: row 2 is out of range for float64 [2, 5]"));
  CHECK_THROWS_WITH(nx::get(nx::scalar(nx::float64, 1), 0), test::Placed("nx::get: a scalar float64 [] has no rows"));
}

TEST_CASE("take gathers along an axis; indices count from the end and are clamped") {
  Tensor m = f64({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(text(nx::take(m, nx::create(nx::int32, {2}, {2, 0}), 1)) == "float64 [2, 2] [[3, 1], [6, 4]]");
  CHECK(text(nx::take(m, nx::create(nx::int64, {1}, {-1}))) == "float64 [1, 3] [[4, 5, 6]]");
  CHECK(text(nx::take(m, nx::create(nx::int32, {2, 1}, {9, -9}), 1)) == "float64 [2, 2, 1] [[[3], [1]], [[6], [4]]]");
  CHECK_THROWS_WITH(nx::take(m, f64({1}, {0})), test::Placed("nx::take: the indices must be an integer tensor, got float64 [1]"));
}

TEST_CASE("uint64 indices and starts beyond int64's range clamp to the end, eager, mapped and compiled") {
  const Tensor m = f64({3}, {1, 2, 3});
  const std::uint64_t half = std::uint64_t(1) << 63;
  const Tensor far = nx::create(nx::uint64, {3}, std::vector<std::uint64_t>{half, ~std::uint64_t(0), 1});
  CHECK(text(nx::take(m, far)) == "float64 [3] [3, 3, 2]");
  CHECK(text(rune::jit([&](const Tensor& i) { return nx::take(m, i); })(far)) == "float64 [3] [3, 3, 2]");
  // per-lane indices and starts take the batched rules
  CHECK(text(rune::vmap([&](const Tensor& i) { return nx::take(m, i); })(far)) == "float64 [3] [3, 3, 2]");
  const Tensor a = nx::reshape(nx::arange(nx::float64, 0, 9), {3, 3});
  const Tensor starts = nx::create(nx::uint64, {2}, std::vector<std::uint64_t>{half, 0});
  CHECK(text(nx::dynamic_slice(a, starts, {1, 2})) == "float64 [1, 2] [[6, 7]]");
  CHECK(text(rune::vmap([&](const Tensor& s) { return nx::dynamic_slice(a, s, {1, 2}); })(nx::stack({starts, starts}))) ==
        "float64 [2, 1, 2] [[[6, 7]], [[6, 7]]]");
  CHECK(text(rune::vmap([&](const Tensor& s) { return nx::dynamic_update_slice(a, f64({1, 1}, {-1}), s); })(
            nx::stack({starts}))) == "float64 [1, 3, 3] [[[0, 1, 2], [3, 4, 5], [-1, 7, 8]]]");
}

TEST_CASE("dynamic_slice and dynamic_update_slice clamp their starts") {
  Tensor a = nx::reshape(nx::arange(nx::float64, 0, 9), {3, 3});
  Tensor s = nx::create(nx::int32, {2}, {1, 2});
  CHECK(text(nx::dynamic_slice(a, s, {2, 1})) == "float64 [2, 1] [[5], [8]]");
  CHECK(text(nx::dynamic_slice(a, s, {2, 2})) == "float64 [2, 2] [[4, 5], [7, 8]]");  // start 2 clamped to 1
  Tensor u = nx::dynamic_update_slice(a, f64({1, 2}, {-1, -2}), nx::create(nx::int64, {2}, {5, 0}));
  CHECK(text(u) == "float64 [3, 3] [[0, 1, 2], [3, 4, 5], [-1, -2, 8]]");
  CHECK(text(a) == "float64 [3, 3] [[0, 1, 2], [3, 4, 5], [6, 7, 8]]");  // unchanged
  CHECK_THROWS_WITH(nx::dynamic_slice(a, nx::create(nx::int32, {1}, {0}), {1, 1}),
                    test::Placed("nx::dynamic_slice: starts must have shape [2] for float64 [3, 3], got int32 [1]"));
  CHECK_THROWS_WITH(nx::dynamic_slice(a, s, {4, 1}), test::Placed("nx::dynamic_slice: sizes [4, 1] do not fit in float64 [3, 3]"));
  CHECK_THROWS_WITH(nx::dynamic_update_slice(a, nx::zeros(nx::float64, {4, 1}), s),
                    test::Placed("nx::dynamic_update_slice: the update float64 [4, 1] does not fit in float64 [3, 3]"));
}
