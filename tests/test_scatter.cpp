// Adding into tensors: nx::scatter_add (take's transpose), nx::segment_sum
// and the compound assignments, eagerly, under jit, grad and vmap.
#include <rune/rune.hpp>

#include <algorithm>
#include <limits>

#include "helpers.hpp"

using nx::Tensor;
using namespace test;

namespace {

Tensor i32(const nx::Shape& shape, std::initializer_list<double> v) { return nx::create(nx::int32, shape, v); }

// Six rows of data with their segment ids: -1 and 3 are outside [0, 3).
Tensor rows() { return nx::reshape(nx::arange(nx::float64, 1, 13), {6, 2}); }
Tensor ids() { return i32({6}, {0, 2, 0, -1, 3, 2}); }

}  // namespace

TEST_CASE("scatter_add adds rows at their indices; repeated indices accumulate") {
  Tensor target = f64({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor updates = f64({3, 2}, {10, 20, 30, 40, 50, 60});
  CHECK(text(nx::scatter_add(target, i32({3}, {0, 2, 0}), updates)) == "float64 [3, 2] [[61, 82], [3, 4], [35, 46]]");
  CHECK(text(target) == "float64 [3, 2] [[1, 2], [3, 4], [5, 6]]");  // the operands are unchanged
  // along another axis (negative counts from the end), and with indices of two axes
  Tensor m = nx::zeros(nx::float64, {2, 3});
  CHECK(text(nx::scatter_add(m, i32({2}, {2, 0}), f64({2, 2}, {1, 2, 3, 4}), -1)) ==
        "float64 [2, 3] [[2, 0, 1], [4, 0, 3]]");
  Tensor four = nx::create(nx::int64, {2, 2}, {1, 2, 3, 4});
  CHECK(text(nx::scatter_add(nx::zeros(nx::int64, {3}), i32({2, 2}, {1, 1, 2, 1}), four)) == "int64 [3] [0, 7, 3]");
}

TEST_CASE("scatter_add wraps and clamps its indices as take does: it is take's transpose") {
  Tensor indices = nx::create(nx::int64, {4}, {-1, 9, -9, 1});  // rows 3, 3 (clamped), 0 (clamped), 1
  CHECK(text(nx::take(nx::arange(nx::int32, 0, 4), indices)) == "int32 [4] [3, 3, 0, 1]");
  CHECK(text(nx::scatter_add(nx::zeros(nx::int32, {4}), indices, nx::create(nx::int32, {4}, {1, 10, 100, 1000}))) ==
        "int32 [4] [100, 1000, 0, 11]");
  // <take(x, i), u> = <x, scatter_add(0, i, u)>
  Tensor x = f64({4, 2}, {0.5, -1, 2, 3, -4, 1.5, 6, 7}), u = f64({4, 2}, {1, 2, -3, 4, 5, 0.25, 7, -8});
  CHECK(nx::item(nx::sum(nx::take(x, indices) * u)) ==
        nx::item(nx::sum(x * nx::scatter_add(nx::zeros_like(x), indices, u))));
}

TEST_CASE("scatter_add with nothing to add") {
  Tensor target = f64({2, 2}, {1, 2, 3, 4});
  CHECK(text(nx::scatter_add(target, i32({0}, {}), nx::zeros(nx::float64, {0, 2}))) ==
        "float64 [2, 2] [[1, 2], [3, 4]]");
  CHECK(text(nx::scatter_add(nx::zeros(nx::float64, {0}), i32({0}, {}), nx::zeros(nx::float64, {0}))) ==
        "float64 [0] []");
  CHECK(text(nx::scatter_add(nx::zeros(nx::float64, {2, 0}), i32({3}, {1, 0, 1}), nx::zeros(nx::float64, {3, 0}))) ==
        "float64 [2, 0] [[], []]");
}

TEST_CASE("scatter_add's errors name it") {
  Tensor target = nx::zeros(nx::float64, {3, 2}), two = i32({2}, {0, 1});
  CHECK_THROWS_WITH(nx::scatter_add(target, f64({2}, {0, 1}), nx::zeros(nx::float64, {2, 2})),
                    test::Placed("nx::scatter_add: the indices must be an integer tensor, got float64 [2]"));
  CHECK_THROWS_WITH(nx::scatter_add(target, two, nx::zeros(nx::float64, {2, 2}), 2),
                    test::Placed("nx::scatter_add: axis 2 is out of range for float64 [3, 2]"));
  CHECK_THROWS_WITH(nx::scatter_add(nx::scalar(nx::float64, 1), two, nx::zeros(nx::float64, {2})),
                    test::Placed("nx::scatter_add: cannot scatter into a scalar float64 []"));
  CHECK_THROWS_WITH(nx::scatter_add(target, two, nx::zeros(nx::float64, {3})),
                    test::Placed("nx::scatter_add: the updates float64 [3] do not have the shape [2, 2] that the indices int32 [2] "
                    "take from float64 [3, 2] along axis 0"));
  CHECK_THROWS_WITH(nx::scatter_add(target, two, nx::zeros(nx::float32, {2, 2})),
                    test::Placed("nx::scatter_add: dtypes float64 and float32 differ (convert one with nx::cast)"));
  CHECK_THROWS_WITH(nx::scatter_add(nx::zeros(nx::bool_, {3}), two, nx::zeros(nx::bool_, {2})),
                    test::Placed("nx::scatter_add: bool [3] is not supported (it takes signed integer, unsigned integer, float or "
                    "complex tensors)"));
  CHECK_THROWS_WITH(nx::scatter_add(nx::zeros(nx::float64, {0, 2}), two, nx::zeros(nx::float64, {2, 2})),
                    test::Placed("nx::scatter_add: cannot index the empty axis 0 of float64 [0, 2]"));
  CHECK_THROWS_WITH(nx::scatter_add(Tensor(), two, target),
                    test::Placed("nx::scatter_add: operand 0 holds no value (it was default-constructed)"));
  // take keeps its own name
  CHECK_THROWS_WITH(nx::take(nx::zeros(nx::float64, {0, 2}), two),
                    test::Placed("nx::take: cannot index the empty axis 0 of float64 [0, 2]"));
}

TEST_CASE("segment_sum sums the rows of each segment and drops ids out of range") {
  CHECK(text(nx::segment_sum(rows(), ids(), 3)) == "float64 [3, 2] [[6, 8], [0, 0], [14, 16]]");
  CHECK(text(nx::segment_sum(rows(), ids(), 5)) == "float64 [5, 2] [[6, 8], [0, 0], [14, 16], [9, 10], [0, 0]]");
  // a dropped row adds nothing, not even its NaN
  Tensor poisoned = nx::where(nx::reshape(nx::equal(ids(), -1.), {6, 1}), 0. / 0., rows());
  CHECK(text(nx::segment_sum(poisoned, ids(), 3)) == "float64 [3, 2] [[6, 8], [0, 0], [14, 16]]");
  // unsigned and 64-bit ids; rows of one element
  Tensor data = nx::create(nx::int64, {4}, {1, 2, 3, 4});
  CHECK(text(nx::segment_sum(data, nx::create(nx::uint8, {4}, {1, 1, 0, 200}), 2)) == "int64 [2] [3, 3]");
  CHECK(text(nx::segment_sum(data, nx::create(nx::int64, {4}, {-9223372036854775807., 0, 0, 1}), 1)) ==
        "int64 [1] [5]");
}

TEST_CASE("segment_sum with no segments or no rows") {
  CHECK(text(nx::segment_sum(rows(), ids(), 0)) == "float64 [0, 2] []");
  CHECK(text(nx::segment_sum(nx::zeros(nx::float64, {0, 2}), i32({0}, {}), 2)) == "float64 [2, 2] [[0, 0], [0, 0]]");
  CHECK(text(nx::segment_sum(nx::zeros(nx::float64, {0}), i32({0}, {}), 0)) == "float64 [0] []");
  // no segments: every row dropped, and its derivative (a take from an empty axis in drop mode) zeros
  auto none = [](const Tensor& d) { return nx::sum(nx::segment_sum(d, ids(), 0)); };
  CHECK(text(rune::grad(none, rows())) == "float64 [6, 2] [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 0]]");
  CHECK(same_bits(rune::jit([&](const Tensor& d) { return rune::grad(none, d); })(rows()), rune::grad(none, rows())));
}

TEST_CASE("segment_sum's errors name it") {
  CHECK_THROWS_WITH(nx::segment_sum(rows(), f64({6}, {0, 0, 0, 0, 0, 0}), 3),
                    test::Placed("nx::segment_sum: the segment ids must be an integer tensor, got float64 [6]"));
  CHECK_THROWS_WITH(nx::segment_sum(rows(), i32({2}, {0, 1}), 3),
                    test::Placed("nx::segment_sum: the segment ids must have shape [6] (one per row of float64 [6, 2]), got "
                    "int32 [2]"));
  CHECK_THROWS_WITH(nx::segment_sum(rows(), nx::reshape(ids(), {6, 1}), 3),
                    test::Placed("nx::segment_sum: the segment ids must have shape [6] (one per row of float64 [6, 2]), got "
                    "int32 [6, 1]"));
  CHECK_THROWS_WITH(nx::segment_sum(rows(), ids(), -1), test::Placed("nx::segment_sum: num_segments must not be negative, got -1"));
  CHECK_THROWS_WITH(nx::segment_sum(nx::scalar(nx::float64, 1), i32({0}, {}), 3),
                    test::Placed("nx::segment_sum: the data must have rows, got the scalar float64 []"));
  CHECK_THROWS_WITH(nx::segment_sum(nx::zeros(nx::bool_, {6}), ids(), 3),
                    test::Placed("nx::segment_sum: bool [6] is not supported (it takes signed integer, unsigned integer, float or "
                    "complex tensors)"));
  CHECK_THROWS_WITH(nx::segment_sum(Tensor(), ids(), 3),
                    test::Placed("nx::segment_sum: operand 0 holds no value (it was default-constructed)"));
}

TEST_CASE("the gradients of scatter_add and segment_sum") {
  Tensor target = f64({3, 2}, {1, 2, 3, 4, 5, 6}), updates = f64({4, 2}, {0.5, -1, 2, 3, -4, 1.5, 6, 7});
  Tensor indices = i32({4}, {2, 0, 2, 7});
  Tensor w = f64({3, 2}, {1, -2, 3, 0.5, -1, 4});
  auto into = [&](const Tensor& t) { return nx::sum(nx::sin(nx::scatter_add(t, indices, updates)) * w); };
  auto from = [&](const Tensor& u) { return nx::sum(nx::sin(nx::scatter_add(target, indices, u)) * w); };
  CHECK(rune::check_grads(into, target).ok);
  CHECK(rune::check_grads(from, updates).ok);
  // each row's gradient is its segment's weight row; dropped rows get zeros
  auto weighted = [&](const Tensor& d) { return nx::sum(nx::segment_sum(d, ids(), 3) * w); };
  CHECK(text(rune::grad(weighted, rows())) == "float64 [6, 2] [[1, -2], [-1, 4], [1, -2], [0, 0], [0, 0], [-1, 4]]");
  CHECK(rune::check_grads([&](const Tensor& d) { return nx::sum(nx::exp(nx::segment_sum(d, ids(), 3)) * w); },
                          rows() * 0.1)
            .ok);
}

TEST_CASE("scatter_add and segment_sum compiled give eager's bits") {
  Tensor target = nx::sin(nx::reshape(nx::arange(nx::float64, 0, 8), {2, 4}));
  Tensor indices = i32({5}, {3, -1, 0, 3, 9}), updates = nx::cos(nx::reshape(nx::arange(nx::float64, 0, 10), {2, 5}));
  auto scatter = [](const Tensor& t, const Tensor& i, const Tensor& u) { return nx::scatter_add(t * 3., i, u, 1); };
  CHECK(same_bits(rune::jit(scatter)(target, indices, updates), scatter(target, indices, updates)));
  auto segments = [](const Tensor& d, const Tensor& s) { return nx::segment_sum(nx::exp(d), s, 4); };
  Tensor data = nx::sin(rows());
  CHECK(same_bits(rune::jit(segments)(data, ids()), segments(data, ids())));
  auto gradient = [](const Tensor& d, const Tensor& s) {
    return rune::grad([&](const Tensor& x) { return nx::sum(nx::square(nx::segment_sum(x, s, 3))); }, d);
  };
  CHECK(same_bits(rune::jit(gradient)(data, ids()), gradient(data, ids())));
}

// Rows of two float64 or four float32 go through the machine's vector
// registers whole (ops/indexing.cpp); each lane must still be the IEEE
// operation a plain loop does on its element: a C++ loop is the oracle,
// over signed zeros, infinities, NaN and subnormals, indices repeated,
// negative and past the end (clamped by take, dropped by segment_sum).
template <class T> void vector_rows_match_a_plain_loop(nx::DType dtype, std::int64_t row) {
  const T inf = std::numeric_limits<T>::infinity(), tiny = std::numeric_limits<T>::denorm_min();
  const std::vector<T> special{T(0), -T(0), inf, -inf, T(1.5), -T(2.25), tiny, T(3e7), T(-1) / T(3), T(7)};
  const std::int64_t n = 6;
  std::vector<T> x(std::size_t(n * row));
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = special[(k * 7 + 3) % special.size()];
  x[5] = std::numeric_limits<T>::quiet_NaN();
  const std::vector<std::int32_t> a{0, 5, -1, 9, 2, 2, 4, 1}, b{3, 3, 0, 1, -7, 5, 2, 2};
  const std::int64_t m = std::int64_t(a.size());
  auto clamped = [&](std::int32_t i) { return std::size_t(i < 0 ? std::max<std::int64_t>(0, i + n) : std::min<std::int64_t>(i, n - 1)); };
  // The oracle: d = x[b] - x[a] row by row, then f = d * 2 summed into segments by a (ids outside [0, n) dropped).
  std::vector<T> diff(std::size_t(m * row)), sums(std::size_t(n * row), T(0));
  for (std::int64_t q = 0; q < m; ++q)
    for (std::int64_t j = 0; j < row; ++j)
      diff[std::size_t(q * row + j)] = x[clamped(b[std::size_t(q)]) * std::size_t(row) + std::size_t(j)] -
                                       x[clamped(a[std::size_t(q)]) * std::size_t(row) + std::size_t(j)];
  for (std::int64_t q = 0; q < m; ++q)
    if (a[std::size_t(q)] >= 0 && a[std::size_t(q)] < n)
      for (std::int64_t j = 0; j < row; ++j)
        sums[std::size_t(a[std::size_t(q)] * row + j)] += diff[std::size_t(q * row + j)] * T(2);
  const Tensor tx = nx::create(dtype, {n, row}, std::vector<double>(x.begin(), x.end()));
  const Tensor ta = nx::create(nx::int32, {m}, std::vector<double>(a.begin(), a.end()));
  const Tensor tb = nx::create(nx::int32, {m}, std::vector<double>(b.begin(), b.end()));
  auto both = [n](const Tensor& v, const Tensor& i, const Tensor& j) {
    const Tensor d = nx::take(v, j, 0) - nx::take(v, i, 0);
    return std::pair{d, nx::segment_sum(d * 2., i, n)};
  };
  for (const auto& [d, s] : {both(tx, ta, tb), rune::jit(both)(tx, ta, tb)}) {
    const std::vector<T> got_d = nx::to_vector<T>(d), got_s = nx::to_vector<T>(s);
    CHECK(bits_equal(got_d, diff));
    CHECK(bits_equal(got_s, sums));
  }
}

TEST_CASE("rows of two float64 and four float32 gathered, subtracted and summed equal a plain loop bit for bit") {
  vector_rows_match_a_plain_loop<double>(nx::float64, 2);
  vector_rows_match_a_plain_loop<float>(nx::float32, 4);
  vector_rows_match_a_plain_loop<double>(nx::float64, 3);  // (no vector: the loop over the row)
}

TEST_CASE("scatter_add and segment_sum mapped equal the loop over the lanes") {
  constexpr std::int64_t lanes = 3;
  Tensor targets = nx::sin(nx::reshape(nx::arange(nx::float64, 0, lanes * 8), {lanes, 2, 4}));
  Tensor updates = nx::cos(nx::reshape(nx::arange(nx::float64, 0, lanes * 6), {lanes, 2, 3}));
  Tensor indices = i32({lanes, 3}, {0, 3, 3, -1, 9, 1, 2, 2, 2});
  Tensor data = nx::sin(nx::reshape(nx::arange(nx::float64, 0, lanes * 12), {lanes, 6, 2}));
  Tensor segment_ids = i32({lanes, 6}, {0, 2, 0, -1, 3, 2, 1, 1, 1, 1, 1, 1, 5, 4, 3, 2, 1, 0});
  auto scatter = [](const Tensor& t, const Tensor& i, const Tensor& u) { return nx::scatter_add(t, i, u, 1); };
  auto segments = [](const Tensor& d, const Tensor& s) { return nx::segment_sum(d, s, 3); };
  auto shared = [&](const Tensor& t, const Tensor& u) { return scatter(t, nx::get(indices, 0), u); };
  auto shared_ids = [&](const Tensor& d) { return segments(d, nx::get(segment_ids, 1)); };
  auto per_lane_ids = [&](const Tensor& s) { return segments(nx::get(data, 0), s); };
  std::vector<Tensor> scattered, shared_scattered, summed, shared_summed, summed_per_id;
  for (std::int64_t l = 0; l < lanes; ++l) {
    scattered.push_back(scatter(nx::get(targets, l), nx::get(indices, l), nx::get(updates, l)));
    shared_scattered.push_back(shared(nx::get(targets, l), nx::get(updates, l)));
    summed.push_back(segments(nx::get(data, l), nx::get(segment_ids, l)));
    shared_summed.push_back(shared_ids(nx::get(data, l)));
    summed_per_id.push_back(per_lane_ids(nx::get(segment_ids, l)));
  }
  CHECK(same_bits(rune::vmap(scatter)(targets, indices, updates), nx::stack(scattered)));
  CHECK(same_bits(rune::vmap(shared)(targets, updates), nx::stack(shared_scattered)));
  CHECK(same_bits(rune::vmap(segments)(data, segment_ids), nx::stack(summed)));
  CHECK(same_bits(rune::vmap(shared_ids)(data), nx::stack(shared_summed)));
  CHECK(same_bits(rune::vmap(per_lane_ids)(segment_ids), nx::stack(summed_per_id)));
  // and the gradient of a mapped segment_sum
  auto loss = [&](const Tensor& d) { return nx::sum(nx::square(rune::vmap(segments)(d, segment_ids))); };
  CHECK(rune::check_grads(loss, data).ok);
}

TEST_CASE("segment_sum is one scatter_add in drop mode, whose text says so and parses back") {
  auto segments = [](const Tensor& d, const Tensor& s) { return nx::segment_sum(d, s, 3); };
  const rune::Program program = rune::program(segments, rows(), ids());
  const std::string printed = rune::to_string(program);
  INFO(printed);
  CHECK(printed.find("scatter_add") != std::string::npos);
  CHECK(printed.find("mode=drop") != std::string::npos);
  CHECK(printed.find("select") == std::string::npos);  // (no mask: the ids are read as they are)
  const rune::Program parsed = rune::parse_program(printed);
  CHECK(parsed == program);
  CHECK(same_bits(rune::run(parsed, {rows(), ids()})[0], segments(rows(), ids())));
  CHECK(rune::parse_program(rune::to_string(rune::program(
            [](const Tensor& x, const Tensor& i) { return nx::take(x, i, 0); }, rows(), ids()))) ==
        rune::program([](const Tensor& x, const Tensor& i) { return nx::take(x, i, 0); }, rows(), ids()));
  const std::string unknown = std::string(printed).replace(printed.find("mode=drop"), 9, "mode=wrap");
  CHECK_THROWS_WITH(rune::parse_program(unknown),
                    Catch::Contains("unknown index mode 'wrap' (expected clamp or drop)"));
  // Its derivative, a take in drop mode (zeros for the dropped rows), mapped with per-lane ids.
  const Tensor w = f64({3, 2}, {1, -2, 3, 0.5, -1, 4});
  auto pulled = [&](const Tensor& d, const Tensor& s) {
    return rune::grad([&](const Tensor& x) { return nx::sum(nx::segment_sum(x, s, 3) * w); }, d);
  };
  const Tensor lane_ids = i32({2, 6}, {0, 2, 0, -1, 3, 2, 5, 1, 1, -7, 0, 2});
  const Tensor data = nx::stack({rows(), rows() * 2.});
  const Tensor mapped = rune::vmap(pulled)(data, lane_ids);
  const Tensor lane_by_lane = nx::stack({pulled(rows(), nx::get(lane_ids, 0)), pulled(rows() * 2., nx::get(lane_ids, 1))});
  CHECK(same_bits(mapped, lane_by_lane));
  CHECK(text(nx::get(mapped, 1)) == "float64 [6, 2] [[0, 0], [3, 0.5], [3, 0.5], [0, 0], [1, -2], [-1, 4]]");
}

TEST_CASE("compound assignment rebinds the handle; other handles keep the old value") {
  Tensor a = f64({2}, {1, 2});
  Tensor kept = a;
  a += 1.;
  CHECK(text(a) == "float64 [2] [2, 3]");
  CHECK(text(kept) == "float64 [2] [1, 2]");
  a -= kept;
  CHECK(text(a) == "float64 [2] [1, 1]");
  a *= f64({2}, {3, 4});
  a /= 2.;
  CHECK(text(a) == "float64 [2] [1.5, 2]");
  (a += 1.) *= 2.;  // each returns the handle
  CHECK(text(a) == "float64 [2] [5, 6]");
  a -= 1.;
  a *= a;
  a /= kept;
  CHECK(text(a) == "float64 [2] [16, 12.5]");
  CHECK(text(kept) == "float64 [2] [1, 2]");
  Tensor m = nx::zeros(nx::float64, {2, 2});
  m += f64({2}, {1, 2});  // broadcasting, as +
  CHECK(text(m) == "float64 [2, 2] [[1, 2], [1, 2]]");
  Tensor none;
  CHECK_THROWS_WITH(none += 1., StartsWith("nx::add: "));
}

TEST_CASE("compound assignment under jit, grad and vmap") {
  auto step = [](const Tensor& x) {
    Tensor y = x;
    y *= x;   // x^2
    y += 1.;  // x^2 + 1
    y /= 2.;
    y -= x;   // (x^2 + 1) / 2 - x
    return y;
  };
  Tensor x = f64({3}, {-1, 0.5, 2});
  CHECK(text(step(x)) == "float64 [3] [2, 0.125, 0.5]");
  CHECK(same_bits(rune::jit(step)(x), step(x)));
  CHECK(text(rune::grad([&](const Tensor& v) { return nx::sum(step(v)); }, x)) == "float64 [3] [-2, -0.5, 1]");
  CHECK(same_bits(rune::vmap(step)(nx::reshape(x, {3, 1})), nx::reshape(step(x), {3, 1})));
}
