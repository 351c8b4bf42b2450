// The differential suite's cases (docs/reliability.md): every primitive of
// the table (ops/primitives.def) on every dtype it accepts, over special
// values (signed zeros, infinities, NaN, subnormals, each dtype's limits),
// random values and shapes with empty and length-1 axes. Each case runs
// eagerly and compiled (rune::jit); this program writes both, bit for bit,
// as JSON lines for tests/differential/compare.py, which recomputes them with
// NumPy (and the float64 derivatives with PyTorch, where it is installed).
//
//   differential_cases OUT.jsonl
//
// A primitive of the table this file has no cases for stops it with an
// error naming the primitive: a new primitive cannot go unchecked.
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/kernels/kernels.hpp"
#include "ops/primitive.hpp"
#include "../primitive_cases.hpp"
#include <rune/rune.hpp>

namespace {

using nx::DType;
using nx::Shape;
using nx::Tensor;
using namespace nx::ops;

// SplitMix64: the same cases on every platform. Each draw is a statement of
// its own (or an element of a braced list, which runs left to right):
// compilers order a call's arguments differently.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
  std::int64_t below(std::int64_t n) { return std::int64_t(next() % std::uint64_t(n)); }
};

// ---- elements, kept as their bytes (bool: one byte each)

// The C++ type an element of a dtype is generated as.
template <DType D> using stored_t = std::conditional_t<D == nx::bool_, unsigned char, nx::element_t<D>>;

// The bit layout of each float type.
template <class T> struct Format;
template <> struct Format<double> { using Bits = std::uint64_t; static constexpr int mantissa = 52, exponent = 11; };
template <> struct Format<float> { using Bits = std::uint32_t; static constexpr int mantissa = 23, exponent = 8; };
template <> struct Format<nx::float16_t> { using Bits = std::uint16_t; static constexpr int mantissa = 10, exponent = 5; };
template <> struct Format<nx::bfloat16_t> { using Bits = std::uint16_t; static constexpr int mantissa = 7, exponent = 8; };

template <class T> T from_bits(typename Format<T>::Bits b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<T>(b);
  } else {
    T t;
    t.bits = b;
    return t;
  }
}
template <class T> T from_double(double x) {
  if constexpr (std::is_floating_point_v<T>) return T(x);
  else return T(float(x));  // (an input: how it rounds does not matter)
}

// Both signs of: zero, infinity, a quiet NaN, the smallest and largest
// subnormals, the smallest normal, the largest finite value, one and its
// neighbours; then values where functions change behaviour (halves, the
// edges of exp's range, large and tiny magnitudes).
template <class T> std::vector<T> float_specials() {
  using F = Format<T>;
  using B = typename F::Bits;
  const B sign = B(B(1) << (F::mantissa + F::exponent)), inf = B(((B(1) << F::exponent) - 1) << F::mantissa);
  const B quiet = B(B(1) << (F::mantissa - 1)), largest_subnormal = B((B(1) << F::mantissa) - 1);
  const B one = B(((B(1) << (F::exponent - 1)) - 1) << F::mantissa);
  std::vector<T> out;
  for (B b : {B(0), inf, B(inf | quiet), B(1), largest_subnormal, B(largest_subnormal + 1), B(inf - 1), one, B(one - 1),
              B(one + 1)}) {
    out.push_back(from_bits<T>(b));
    out.push_back(from_bits<T>(B(b | sign)));
  }
  for (double x : {0.5, 1.5, 2.5, 3., 0.1, 3.141592653589793, 1e-5, 100., 1e4, 88.8, 709.9, 745.2, 1e30, 1e300, 1e-300}) {
    out.push_back(from_double<T>(x));
    out.push_back(from_double<T>(-x));
  }
  // Just beyond float16's and bfloat16's halfway points, by less than
  // float32 keeps: a conversion through float32 rounds them twice.
  if constexpr (std::is_same_v<T, double>)
    for (double x : {1 + 0x1p-11 + 0x1p-30, 1 + 0x1p-8 + 0x1p-30, 1 + 0x1p-11 - 0x1p-30, 65520 - 0x1p-20})
      out.push_back(x), out.push_back(-x);
  return out;
}

// A few reals whose pairs make the complex specials (every pair of them).
template <class R> std::vector<std::complex<R>> complex_specials() {
  const R inf = std::numeric_limits<R>::infinity(), nan = std::numeric_limits<R>::quiet_NaN();
  const std::vector<R> parts = {R(0), R(-0.), inf, -inf, nan, R(1), R(-2.5)};
  std::vector<std::complex<R>> out;
  for (R re : parts)
    for (R im : parts) out.push_back({re, im});
  return out;
}

template <class T> std::vector<T> integer_specials() {
  using L = std::numeric_limits<T>;
  std::vector<T> out = {T(0), T(1), T(2), T(3), T(7), L::max(), T(L::max() - 1), L::min(), T(L::min() + 1)};
  if constexpr (L::is_signed)
    for (T x : {T(-1), T(-2), T(-3), T(-7)}) out.push_back(x);
  return out;
}

template <class T> std::vector<T> specials_of() {
  if constexpr (std::is_same_v<T, unsigned char> || std::is_integral_v<T>) {
    if constexpr (std::is_same_v<T, unsigned char>) return {0, 1};
    else return integer_specials<T>();
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return complex_specials<typename T::value_type>();
  } else {
    return float_specials<T>();
  }
}

// A random float: uniform in [-4, 4], of a random magnitude across the
// type's range, or any bit pattern (payloads, subnormals), a third each.
template <class T> T random_float(Rng& rng) {
  using F = Format<T>;
  switch (rng.below(3)) {
    case 0: return from_double<T>(rng.uniform(-4, 4));
    case 1: {
      const int emax = (1 << (F::exponent - 1)) - 1, emin = 1 - emax - F::mantissa;
      const int exponent = int(rng.uniform(emin, emax));
      const double x = std::ldexp(1 + rng.uniform(0, 1), exponent);
      return from_double<T>(rng.below(2) ? x : -x);
    }
    default: return from_bits<T>(typename F::Bits(rng.next()));
  }
}

template <class T> T random_value(Rng& rng) {
  if constexpr (std::is_same_v<T, unsigned char>) {
    return T(rng.below(2));
  } else if constexpr (std::is_integral_v<T>) {
    if (rng.below(2)) return T(rng.next());
    return std::is_signed_v<T> ? T(rng.below(201) - 100) : T(rng.below(201));
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    return {random_float<R>(rng), random_float<R>(rng)};
  } else {
    return random_float<T>(rng);
  }
}

// Elements of one dtype, as bytes.
struct Values {
  DType dtype;
  std::vector<unsigned char> bytes;
  std::int64_t count() const { return std::int64_t(bytes.size() / nx::size_of(dtype)); }
};

template <class T> Values values_of(DType dtype, const std::vector<T>& elements) {
  Values v{dtype, std::vector<unsigned char>(elements.size() * sizeof(T))};
  if (!elements.empty()) std::memcpy(v.bytes.data(), elements.data(), v.bytes.size());
  return v;
}

Values specials(DType dtype) {
  return nx::visit_dtype(dtype, [&](auto d) { return values_of(dtype, specials_of<stored_t<decltype(d)::value>>()); });
}

Values random(DType dtype, std::int64_t n, Rng& rng) {
  return nx::visit_dtype(dtype, [&](auto d) {
    using T = stored_t<decltype(d)::value>;
    std::vector<T> out;
    for (std::int64_t i = 0; i < n; ++i) out.push_back(random_value<T>(rng));
    return values_of(dtype, out);
  });
}

// Random values in [lo, hi] (float dtypes only): smooth points for derivatives.
Values uniform(std::int64_t n, double lo, double hi, Rng& rng) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(rng.uniform(lo, hi));
  return values_of(nx::float64, v);
}

Values joined(Values a, const Values& b) {
  a.bytes.insert(a.bytes.end(), b.bytes.begin(), b.bytes.end());
  return a;
}

// Each element `times` times in a row (repeat), or the whole `times` times (tile).
Values repeated(const Values& v, std::int64_t times, bool whole) {
  const std::size_t size = nx::size_of(v.dtype);
  const std::int64_t n = v.count();
  Values out{v.dtype, {}};
  for (std::int64_t i = 0; i < n * times; ++i) {
    const std::int64_t k = whole ? i % n : i / times;
    out.bytes.insert(out.bytes.end(), v.bytes.begin() + k * size, v.bytes.begin() + (k + 1) * size);
  }
  return out;
}

// The first n values, cycling when there are fewer.
Values cycled(const Values& v, std::int64_t n) {
  Values out = repeated(v, (n + v.count() - 1) / std::max<std::int64_t>(v.count(), 1), true);
  out.bytes.resize(std::size_t(n) * nx::size_of(v.dtype));
  return out;
}

Tensor tensor(const Values& v, const Shape& shape) {
  if (v.count() != nx::numel(shape)) throw std::logic_error("differential: values do not fill the shape");
  return nx::detail::create_from(v.dtype, shape, v.dtype, v.bytes.data(), std::size_t(v.count()));
}

Tensor tensor(const Values& v) { return tensor(v, {v.count()}); }

Tensor random_tensor(DType dtype, const Shape& shape, Rng& rng) {
  return tensor(random(dtype, nx::numel(shape), rng), shape);
}

// A tensor whose elements are the specials, then random values, cycled to fill it.
Tensor mixed_tensor(DType dtype, const Shape& shape, Rng& rng) {
  return tensor(cycled(joined(specials(dtype), random(dtype, 16, rng)), nx::numel(shape)), shape);
}

Tensor indices(DType dtype, const std::vector<double>& v) { return nx::create(dtype, {std::int64_t(v.size())}, v); }

// ---- writing cases

std::string hex(const unsigned char* p, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) s[2 * i] = digits[p[i] >> 4], s[2 * i + 1] = digits[p[i] & 15];
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

// Items joined by commas, in brackets.
template <class Items, class F> std::string listed(const Items& items, F&& item) {
  std::string out = "[";
  for (const auto& x : items) {
    if (out.size() > 1) out += ',';
    out += item(x);
  }
  return out + "]";
}

std::string json(const Shape& s) {
  return listed(s, [](std::int64_t n) { return std::to_string(n); });
}

std::string json(const Tensor& t) {
  if (!t.defined()) return "null";
  std::vector<unsigned char> bytes(std::size_t(t.numel()) * nx::size_of(t.dtype()));
  nx::detail::read_into(t, t.dtype(), bytes.data(), "differential");
  return "{\"dtype\":" + quoted(std::string(nx::name(t.dtype()))) + ",\"shape\":" + json(t.shape()) +
         ",\"hex\":\"" + hex(bytes.data(), bytes.size()) + "\"}";
}

std::string json(const std::vector<Tensor>& ts) {
  return listed(ts, [](const Tensor& t) { return json(t); });
}

std::string json(const Params& q) {
  const double value = q.value;
  return "{\"axes\":" + json(q.axes) + ",\"shape\":" + json(q.shape) + ",\"starts\":" + json(q.starts) +
         ",\"stops\":" + json(q.stops) + ",\"steps\":" + json(q.steps) + ",\"lo\":" + json(q.lo) +
         ",\"hi\":" + json(q.hi) + ",\"interior\":" + json(q.interior) + ",\"dtype\":" +
         quoted(std::string(nx::name(q.dtype))) + ",\"value\":\"" +
         hex(reinterpret_cast<const unsigned char*>(&value), sizeof value) + "\",\"axis\":" + std::to_string(q.axis) +
         ",\"mode\":" + quoted(q.mode == IndexMode::drop ? "drop" : "clamp") + "}";
}

bool same_bits(const Tensor& a, const Tensor& b) { return json(a) == json(b); }

// A result, or the message of the error that stopped it.
struct Outcome {
  Tensor value;
  std::string error;
};

Outcome attempt(const std::function<Tensor()>& f) {
  try {
    return {f(), {}};
  } catch (const std::exception& e) {
    return {Tensor(), e.what()};
  }
}

// A function of the operands: a primitive bound with its parameters, or a
// composite nx function.
using Function = std::function<Tensor(const std::vector<Tensor>&)>;

Function bound(Prim p, const Params& q) {
  return [p, q](const std::vector<Tensor>& xs) { return bind(p, xs, q); };
}

class Writer {
 public:
  explicit Writer(const std::string& path) : out_(path) {
    if (!out_) throw std::runtime_error("differential_cases: cannot write " + path);
  }

  // One call of primitive p: eagerly, then compiled; the compiled result
  // is written only where its bits differ from eager's.
  void call(Prim p, const std::vector<Tensor>& operands, const Params& q) {
    run("call", std::string(info(p).name), operands, q, bound(p, q));
  }

  // One call of a composite nx function (named as compare.py knows it;
  // q holds its axes), eagerly and compiled.
  void composite(const std::string& name, const std::vector<Tensor>& operands, const Params& q, const Function& f) {
    run("composite", name, operands, q, f);
  }

  // The derivatives of sum(f(operands) * weights) in the operands (float64).
  void gradient(const std::string& name, const std::vector<Tensor>& operands, const Params& q, const Function& f,
                Rng& rng) {
    const Outcome y = attempt([&] { return f(operands); });
    if (!y.error.empty()) throw std::logic_error("differential: a gradient case fails: " + y.error);
    const Tensor weights = tensor(uniform(y.value.numel(), 0.5, 2, rng), y.value.shape());
    std::vector<Tensor> grads;
    std::string error;
    try {
      grads = rune::grad([&](const std::vector<Tensor>& xs) { return nx::sum(f(xs) * weights); }, operands);
    } catch (const std::exception& e) {
      error = e.what();
    }
    out_ << "{\"kind\":\"grad\",\"prim\":" << quoted(name) << ",\"operands\":" << json(operands)
         << ",\"params\":" << json(q) << ",\"weights\":" << json(weights) << ",\"grads\":" << json(grads);
    if (!error.empty()) out_ << ",\"error\":" << quoted(error);
    out_ << "}\n";
    ++count_;
  }
  void gradient(Prim p, const std::vector<Tensor>& operands, const Params& q, Rng& rng) {
    gradient(std::string(info(p).name), operands, q, bound(p, q), rng);
  }

  // A case computed by the caller (the collectives, which only a map computes).
  void computed(Prim p, const std::vector<Tensor>& operands, const Params& q, const Outcome& eager,
                const Outcome& jit) {
    write("call", std::string(info(p).name), operands, q, eager, jit);
  }

  void line(const std::string& text) { out_ << text << "\n"; }
  int count() const { return count_; }
  // How many calls were traced and compiled by rune::jit.
  std::int64_t compiled() const { return compiled_; }

 private:
  void run(const char* kind, const std::string& name, const std::vector<Tensor>& operands, const Params& q,
           const Function& f) {
    const Outcome eager = attempt([&] { return f(operands); });
    auto compiled = rune::jit(f);
    const Outcome jit = attempt([&] { return compiled(operands); });
    compiled_ += compiled.traces();
    write(kind, name, operands, q, eager, jit);
  }

  void write(const char* kind, const std::string& name, const std::vector<Tensor>& operands, const Params& q,
             const Outcome& eager, const Outcome& jit) {
    out_ << "{\"kind\":\"" << kind << "\",\"prim\":" << quoted(name) << ",\"operands\":" << json(operands)
         << ",\"params\":" << json(q);
    if (eager.error.empty()) out_ << ",\"result\":" << json(eager.value);
    else out_ << ",\"error\":" << quoted(eager.error);
    if (!jit.error.empty()) {
      if (jit.error != eager.error) out_ << ",\"jit_error\":" << quoted(jit.error);
    } else if (!eager.error.empty() || !same_bits(eager.value, jit.value)) {
      out_ << ",\"jit\":" << json(jit.value);
    }
    out_ << "}\n";
    ++count_;
  }

  std::ofstream out_;
  int count_ = 0;
  std::int64_t compiled_ = 0;
};

// ---- the cases of each family

std::vector<DType> accepted(Prim p) {
  std::vector<DType> out;
  for (int d = 0; d < nx::dtype_count; ++d)
    if (info(p).accepts & dtype_class(DType(d))) out.push_back(DType(d));
  return out;
}

void unary_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  w.call(p, {tensor(joined(specials(dt), random(dt, 64, rng)))}, {});
  for (const Shape& s : {Shape{0}, Shape{}, Shape{1}, Shape{2, 0, 3}}) w.call(p, {random_tensor(dt, s, rng)}, {});
}

// Every pair of specials, random pairs, and broadcasts (length-1 and empty axes).
void binary_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  const Values s = specials(dt);
  const std::int64_t n = s.count();
  w.call(p, {tensor(repeated(s, n, false)), tensor(repeated(s, n, true))}, {});
  w.call(p, {random_tensor(dt, {64}, rng), random_tensor(dt, {64}, rng)}, {});
  w.call(p, {random_tensor(dt, {4, 1}, rng), random_tensor(dt, {3}, rng)}, {});
  w.call(p, {random_tensor(dt, {0, 3}, rng), random_tensor(dt, {1}, rng)}, {});
  w.call(p, {random_tensor(dt, {}, rng), random_tensor(dt, {2, 2}, rng)}, {});
}

void select_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  w.call(p, {random_tensor(nx::bool_, {64}, rng), mixed_tensor(dt, {64}, rng), random_tensor(dt, {64}, rng)}, {});
  w.call(p, {random_tensor(nx::bool_, {2, 1}, rng), random_tensor(dt, {3}, rng), random_tensor(dt, {}, rng)}, {});
  w.call(p, {random_tensor(nx::bool_, {0}, rng), random_tensor(dt, {0}, rng), random_tensor(dt, {1}, rng)}, {});
}

// Every dtype into every dtype.
void convert_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  for (int to = 0; to < nx::dtype_count; ++to) {
    Params q;
    q.dtype = DType(to);
    w.call(p, {tensor(joined(specials(dt), random(dt, 64, rng)))}, q);
    w.call(p, {random_tensor(dt, {0}, rng)}, q);
  }
}

// Shapes with their axes: none, each, all; an empty axis; length-1 axes. A
// reduction takes them as params.axes, argmax and argmin one as params.axis.
void reduce_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  const bool one_axis = info(p).family == Family::arg;
  struct Shaped {
    Shape shape;
    std::vector<Shape> axes;
  };
  const std::vector<Shaped> cases = {{{6, 11}, {{}, {0}, {1}, {0, 1}}},
                                     {{2, 3, 4}, {{1}, {0, 2}}},
                                     {{3, 0}, {{0}, {1}, {0, 1}}},
                                     {{1, 5}, {{0}, {1}}},
                                     {{}, {{}}},
                                     {{40}, {{0}}}};
  for (const Shaped& c : cases) {
    const Tensor x = mixed_tensor(dt, c.shape, rng), r = random_tensor(dt, c.shape, rng);
    for (const Shape& axes : c.axes) {
      Params q;
      if (!one_axis) q.axes = axes;
      else if (axes.size() == 1) q.axis = axes[0];
      else continue;
      w.call(p, {x}, q);
      w.call(p, {r}, q);
    }
  }
}

// The layout primitives, each with parameters of its own; the operands mix
// specials and random values, with empty and length-1 axes.
void layout_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  const Tensor m = mixed_tensor(dt, {3, 4}, rng), cube = mixed_tensor(dt, {2, 3, 4}, rng);
  const Tensor empty = random_tensor(dt, {0, 3}, rng), thin = mixed_tensor(dt, {1, 4}, rng);
  auto call = [&](std::vector<Tensor> operands, auto&& set) {
    Params q;
    set(q);
    w.call(p, operands, q);
  };
  switch (p) {
    case Prim::reshape:
      call({m}, [](Params& q) { q.shape = {2, 6}; });
      call({cube}, [](Params& q) { q.shape = {24}; });
      call({empty}, [](Params& q) { q.shape = {3, 0, 1}; });
      call({thin}, [](Params& q) { q.shape = {4}; });
      return;
    case Prim::transpose:
      call({m}, [](Params& q) { q.axes = {1, 0}; });
      call({cube}, [](Params& q) { q.axes = {2, 0, 1}; });
      call({empty}, [](Params& q) { q.axes = {1, 0}; });
      return;
    case Prim::broadcast:
      call({thin}, [](Params& q) { q.shape = {3, 4}; });
      call({m}, [](Params& q) { q.shape = {2, 3, 4}; });
      call({random_tensor(dt, {}, rng)}, [](Params& q) { q.shape = {2, 2}; });
      call({thin}, [](Params& q) { q.shape = {0, 4}; });
      return;
    case Prim::slice:
      call({m}, [](Params& q) { q.starts = {1, 0}, q.stops = {3, 4}, q.steps = {1, 3}; });
      call({cube}, [](Params& q) { q.starts = {0, 2, 1}, q.stops = {2, 2, 4}, q.steps = {2, 1, 2}; });
      call({empty}, [](Params& q) { q.starts = {0, 1}, q.stops = {0, 3}, q.steps = {1, 1}; });
      return;
    case Prim::pad: {
      const double fill = nx::is_inexact(dt) ? -0. : 5;
      call({m}, [&](Params& q) { q.lo = {1, 0}, q.hi = {0, 2}, q.interior = {0, 1}, q.value = fill; });
      call({empty}, [&](Params& q) { q.lo = {1, 1}, q.hi = {1, 0}, q.interior = {2, 0}, q.value = 1; });
      call({thin}, [&](Params& q) { q.lo = {0, 2}, q.hi = {2, 0}, q.interior = {0, 0}, q.value = fill; });
      if (nx::is_inexact(dt))
        call({m}, [](Params& q) { q.lo = {1, 1}, q.hi = {1, 1}, q.interior = {1, 0}, q.value = NAN; });
      return;
    }
    case Prim::concatenate:
      call({m, thin}, [](Params& q) { q.axis = 0; });
      call({m, m, random_tensor(dt, {3, 0}, rng)}, [](Params& q) { q.axis = 1; });
      call({thin}, [](Params& q) { q.axis = 1; });
      return;
    case Prim::flip:
      call({m}, [](Params& q) { q.axes = {0, 1}; });
      call({cube}, [](Params& q) { q.axes = {1}; });
      call({m}, [](Params&) {});
      call({empty}, [](Params& q) { q.axes = {0}; });
      return;
    case Prim::take:
      call({m, indices(nx::int32, {2, 0, 2, -1, -4, -9, 7})}, [](Params& q) { q.axis = 1; });
      call({cube, indices(nx::int64, {1, -1, 5})}, [](Params& q) { q.axis = 0; });
      call({m, indices(nx::uint8, {0, 3, 200})}, [](Params& q) { q.axis = 0; });
      call({m, nx::create(nx::uint64, {3}, std::vector<std::uint64_t>{1, 1ull << 63, ~0ull})},
           [](Params& q) { q.axis = 1; });
      call({m, indices(nx::int32, {})}, [](Params& q) { q.axis = 0; });
      call({thin, nx::create(nx::int16, {2, 2}, {0, 3, -1, 1})}, [](Params& q) { q.axis = 1; });
      // drop mode (segment_sum's transpose): an index outside the axis, negative ones too, gives zeros
      call({m, indices(nx::int32, {2, 0, -1, 4, -9, 1})}, [](Params& q) { q.axis = 1, q.mode = IndexMode::drop; });
      call({cube, indices(nx::uint8, {0, 200, 2})}, [](Params& q) { q.axis = 0, q.mode = IndexMode::drop; });
      return;
    case Prim::scatter_add:
      call({m, indices(nx::int32, {1, 1, -1, 9}), mixed_tensor(dt, {3, 4}, rng)}, [](Params& q) { q.axis = 1; });
      call({cube, indices(nx::int64, {0, 0, 1}), random_tensor(dt, {3, 3, 4}, rng)}, [](Params& q) { q.axis = 0; });
      call({m, indices(nx::int32, {}), random_tensor(dt, {0, 4}, rng)}, [](Params& q) { q.axis = 0; });
      // drop mode (segment_sum): an update whose index is outside the axis, negative ones too, is dropped
      call({m, indices(nx::int32, {1, -1, 3, 0, 4}), mixed_tensor(dt, {3, 5}, rng)},
           [](Params& q) { q.axis = 1, q.mode = IndexMode::drop; });
      call({cube, indices(nx::int64, {2, 0, -3, 2}), random_tensor(dt, {4, 3, 4}, rng)},
           [](Params& q) { q.axis = 0, q.mode = IndexMode::drop; });
      return;
    case Prim::dynamic_slice:
      call({m, indices(nx::int32, {1, 1})}, [](Params& q) { q.shape = {2, 2}; });
      call({m, indices(nx::int64, {-5, 9})}, [](Params& q) { q.shape = {1, 3}; });
      call({cube, indices(nx::uint32, {1, 0, 3})}, [](Params& q) { q.shape = {1, 3, 0}; });
      return;
    case Prim::dynamic_update_slice:
      call({m, mixed_tensor(dt, {2, 2}, rng), indices(nx::int32, {1, 3})}, [](Params&) {});
      call({m, random_tensor(dt, {3, 1}, rng), indices(nx::int64, {-2, -1})}, [](Params&) {});
      call({cube, random_tensor(dt, {1, 0, 2}, rng), indices(nx::uint8, {9, 0, 1})}, [](Params&) {});
      return;
    default: throw std::logic_error("differential: no cases for " + std::string(info(p).name));
  }
}

// A well conditioned square matrix: random entries plus 4 on the diagonal.
Tensor dominant(DType dt, const Shape& shape, Rng& rng) {
  const std::int64_t n = shape.back();
  const Tensor a = nx::cast(tensor(uniform(nx::numel(shape), -0.5, 0.5, rng), shape), dt);
  return a + nx::cast(nx::eye(nx::float64, n) * 4., dt);
}

void linalg_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  switch (p) {
    case Prim::matmul: {
      const bool inexact = nx::is_inexact(dt);
      auto operand = [&](const Shape& s) { return inexact ? nx::cast(tensor(uniform(nx::numel(s), -2, 2, rng), s), dt) : random_tensor(dt, s, rng); };
      w.call(p, {operand({2, 3, 4}), operand({2, 4, 5})}, {});
      w.call(p, {operand({3, 0}), operand({0, 2})}, {});
      w.call(p, {operand({1, 1}), operand({1, 7})}, {});
      w.call(p, {operand({0, 3}), operand({3, 2})}, {});
      w.call(p, {mixed_tensor(dt, {4, 4}, rng), mixed_tensor(dt, {4, 3}, rng)}, {});  // specials: NaN-ness, infinities
      return;
    }
    case Prim::solve:
      w.call(p, {dominant(dt, {2, 3, 3}, rng), nx::cast(tensor(uniform(12, -2, 2, rng), {2, 3, 2}), dt)}, {});
      w.call(p, {dominant(dt, {1, 1}, rng), nx::cast(tensor(uniform(3, -2, 2, rng), {1, 3}), dt)}, {});
      w.call(p, {nx::zeros(dt, {0, 0}), nx::zeros(dt, {0, 2})}, {});
      w.call(p, {nx::zeros(dt, {2, 2}), nx::ones(dt, {2, 1})}, {});  // singular: NaN
      return;
    case Prim::cholesky: {
      const Tensor a = nx::cast(tensor(uniform(18, -1, 1, rng), {2, 3, 3}), dt);
      w.call(p, {nx::matmul(a, nx::transpose(a, {0, 2, 1})) + nx::cast(nx::eye(nx::float64, 3) * 3., dt)}, {});
      w.call(p, {nx::full(dt, {1, 1}, 4.)}, {});
      w.call(p, {nx::zeros(dt, {0, 0})}, {});
      w.call(p, {nx::cast(nx::create(nx::float64, {2, 2}, {1, 2, 2, 1}), dt)}, {});  // not positive definite: NaN
      return;
    }
    default: throw std::logic_error("differential: no cases for " + std::string(info(p).name));
  }
}

void random_cases(Writer& w, Prim p, Rng& rng) {
  for (const Shape& s : {Shape{5}, Shape{2, 3}, Shape{0}, Shape{}}) {
    Params q;
    q.shape = s;
    w.call(p, {random_tensor(nx::uint32, {2}, rng)}, q);
    w.call(p, {random_tensor(nx::uint32, {3, 2}, rng)}, q);
  }
}

// The collectives, which only a map computes: lanes_gather through
// rune::lanes, lanes_sum (its transpose) bound inside the map.
void collective_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  for (const Shape& s : {Shape{3, 2}, Shape{1, 4}, Shape{4}, Shape{0, 2}}) {
    const Tensor x = p == Prim::lanes_sum ? random_tensor(dt, {s[0], s[0], 2}, rng) : mixed_tensor(dt, s, rng);
    const rune::Axis ax = rune::axis();
    Params q;
    q.axis = std::int64_t(ax.id);
    q.shape = {s[0]};
    auto lane = [p, ax, q](const Tensor& r) {
      return p == Prim::lanes_gather ? rune::lanes(ax, r) : bind(Prim::lanes_sum, {r}, q);
    };
    auto compiled = rune::jit([&](const Tensor& xs) { return rune::vmap(lane, ax)(xs); });
    w.computed(p, {x}, q, attempt([&] { return rune::vmap(lane, ax)(x); }), attempt([&] { return compiled(x); }));
  }
}

// The ranks' collectives in this one process, a world of one (tests/ranks
// runs them on 1 to 4 processes against maps).
void ranks_cases(Writer& w, Prim p, DType dt, Rng& rng) {
  for (const Shape& s : {Shape{3, 2}, Shape{4}, Shape{0, 2}}) {
    Shape rows = s;
    if (p == Prim::ranks_scatter_sum) rows.insert(rows.begin(), 1);
    const Tensor x = mixed_tensor(dt, rows, rng);
    for (bool paired : {true, false}) {
      Params q;
      if (p == Prim::ranks_gather || p == Prim::ranks_scatter_sum) q.shape = {1};
      if (p == Prim::ranks_permute && paired) q.starts = {0}, q.stops = {0};
      if (p != Prim::ranks_permute && !paired) continue;
      auto one = [p, q](const Tensor& v) { return bind(p, {v}, q); };
      auto compiled = rune::jit(one);
      w.computed(p, {x}, q, attempt([&] { return one(x); }), attempt([&] { return compiled(x); }));
    }
  }
}

// ---- derivatives (float64): smooth random points and the specials

Values derivative_specials() {
  return values_of(nx::float64, std::vector<double>{0., -0., 1., -1., 0.5, -0.5, 2., 1e-300, 1e300, 800., -800.,
                                                    INFINITY, -INFINITY, NAN});
}

void gradient_cases(Writer& w, Prim p, Rng& rng) {
  const PrimInfo& I = info(p);
  if ((I.flags & NoDiff) || !(I.accepts & F)) return;
  const auto [lo, hi] = test::domain(p);  // (smooth there)
  const DType f64 = nx::float64;
  if (I.family == Family::unary) {
    w.gradient(p, {tensor(joined(uniform(16, lo, hi, rng), derivative_specials()))}, {}, rng);
  } else if (I.family == Family::binary) {
    const Values s = derivative_specials();
    w.gradient(p, {tensor(uniform(16, lo, hi, rng)), tensor(uniform(16, lo, hi, rng))}, {}, rng);
    w.gradient(p, {tensor(repeated(s, s.count(), false)), tensor(repeated(s, s.count(), true))}, {}, rng);
  } else if (I.family == Family::reduce) {
    Params q;
    q.axes = {1};
    w.gradient(p, {tensor(uniform(12, 0.5, 2, rng), {3, 4})}, q, rng);
    w.gradient(p, {nx::create(f64, {3, 4}, {1, 3, 3, 0, 0, 2, 0, -1, NAN, 1, -0., 0})}, q, rng);  // ties, zeros, NaN
  } else if (p == Prim::matmul) {
    w.gradient(p, {tensor(uniform(6, -1, 1, rng), {2, 3}), tensor(uniform(12, -1, 1, rng), {3, 4})}, {}, rng);
  } else if (p == Prim::solve) {
    w.gradient(p, {dominant(f64, {3, 3}, rng), tensor(uniform(6, -1, 1, rng), {3, 2})}, {}, rng);
  } else if (p == Prim::cholesky) {  // symmetric positive definite: a a^T + 3
    const Tensor a = tensor(uniform(9, -1, 1, rng), {3, 3});
    w.gradient(p, {nx::matmul(a, nx::transpose(a)) + nx::eye(f64, 3) * 3.}, {}, rng);
  }
}

// ---- composites: nx functions built of primitives whose answers the
// issues found wrong (16-bit means and logsumexp of many elements, sigmoid
// and its derivative far out, NumPy's integer sums)

// A reduction over `axes` (a lambda: the nx functions have defaulted arguments).
template <class F> Function reduced(F f, const nx::Axes& axes) {
  return [f, axes](const std::vector<Tensor>& xs) { return f(xs[0], axes); };
}
const auto mean = [](const Tensor& t, const nx::Axes& axes) { return nx::mean(t, axes); };
const auto logsumexp = [](const Tensor& t, const nx::Axes& axes) { return nx::logsumexp(t, axes); };
const auto sum = [](const Tensor& t, const nx::Axes& axes) { return nx::sum(t, axes); };

void composite_cases(Writer& w, Rng& rng) {
  for (DType dt : {nx::float16, nx::bfloat16, nx::float32, nx::float64, nx::complex64, nx::complex128}) {
    std::vector<std::pair<Tensor, nx::Axes>> operands = {{mixed_tensor(dt, {6, 11}, rng), {1}},
                                                         {random_tensor(dt, {3, 0}, rng), {1}},
                                                         {nx::full(dt, {70000}, 0.01), {}},
                                                         {nx::ones(dt, {140000}), {}},
                                                         {nx::ones(dt, {100, 1000}), {}}};
    for (const auto& [x, axes] : operands) {
      Params q;
      q.axes = axes;
      w.composite("mean", {x}, q, reduced(mean, axes));
      if (!nx::is_complex(dt)) w.composite("logsumexp", {x}, q, reduced(logsumexp, axes));
    }
    if (!nx::is_complex(dt)) w.composite("logsumexp", {nx::zeros(dt, {70000})}, {}, reduced(logsumexp, {}));
  }
  const Function sigmoid = [](const std::vector<Tensor>& xs) { return nx::sigmoid(xs[0]); };
  for (DType dt : {nx::float16, nx::bfloat16, nx::float32, nx::float64})
    w.composite("sigmoid", {tensor(joined(specials(dt), random(dt, 64, rng)))}, {}, sigmoid);
  w.gradient("sigmoid", {tensor(joined(uniform(16, -4, 4, rng), derivative_specials()))}, {}, sigmoid, rng);
  // nx::sum with no dtype: NumPy sums integers of fewer bits in int64 (uint64 for unsigned)
  for (DType dt : {nx::int8, nx::int16, nx::int32, nx::uint8, nx::uint32})
    w.composite("sum", {nx::full(dt, {10000}, 20)}, {}, reduced(sum, {}));
}

// ---- the table

void primitive_cases(Writer& w, Prim p, Rng& rng) {
  const PrimInfo& I = info(p);
  for (DType dt : accepted(p)) {
    switch (I.family) {
      case Family::unary: unary_cases(w, p, dt, rng); break;
      case Family::binary: binary_cases(w, p, dt, rng); break;
      case Family::select: select_cases(w, p, dt, rng); break;
      case Family::convert: convert_cases(w, p, dt, rng); break;
      case Family::reduce: case Family::arg: reduce_cases(w, p, dt, rng); break;
      case Family::layout: layout_cases(w, p, dt, rng); break;
      case Family::linalg: linalg_cases(w, p, dt, rng); break;
      case Family::collective: collective_cases(w, p, dt, rng); break;
      case Family::random: break;
      case Family::ranks: ranks_cases(w, p, dt, rng); break;
    }
  }
  if (I.family == Family::random) random_cases(w, p, rng);
  gradient_cases(w, p, rng);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: differential_cases OUT.jsonl\n");
    return 2;
  }
  try {
    Writer w(argv[1]);
    w.line("{\"kind\":\"table\",\"simd\":" + quoted(nx::ops::kernels::table().arch) + ",\"prims\":" +
           listed(prim_infos, [](const PrimInfo& I) { return quoted(std::string(I.name)); }) + "}");
    Rng rng{25};
    for (int i = 0; i < prim_count; ++i) primitive_cases(w, Prim(i), rng);
    composite_cases(w, rng);
    std::printf("differential_cases: %d cases of %d primitives, %lld compiled\n", w.count(), prim_count,
                static_cast<long long>(w.compiled()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "differential_cases: %s\n", e.what());
    return 1;
  }
}
