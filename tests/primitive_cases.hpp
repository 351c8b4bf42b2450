// Sample calls of the primitives, shared by the tests enrolled from the
// primitive table (tests/test_primitives.cpp, tests/test_grad_properties.cpp).
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "ops/primitive.hpp"
#include <rune/nx.hpp>
#include <rune/random.hpp>

using nx::Tensor;
using namespace nx::ops;

namespace test {

// One way to call a primitive: its operands (the differentiated ones are
// the float ones) and parameters.
struct Case {
  Prim prim;
  std::vector<Tensor> operands;
  Params params;
};

inline Tensor uniform(nx::DType dtype, const nx::Shape& shape, double lo, double hi, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(std::size_t(nx::numel(shape)));
  for (double& e : v) e = u(rng);
  return nx::create(dtype, shape, std::span<const double>(v));
}

// The domain where a primitive is smooth, away from kinks and poles.
inline std::pair<double, double> domain(Prim p) {
  switch (p) {
    case Prim::log: case Prim::log2: case Prim::sqrt: case Prim::rsqrt: case Prim::pow: return {0.5, 2};
    case Prim::log1p: return {-0.5, 2};
    case Prim::asin: case Prim::acos: return {-0.8, 0.8};
    case Prim::tan: return {-1, 1};
    case Prim::div: case Prim::mod: case Prim::atan2: return {0.6, 2.5};
    default: return {-2, 2};
  }
}

// One case for each differentiable primitive (cholesky aside: it needs
// symmetric perturbations, tests/test_linalg.cpp checks it) over dt operands.
inline std::vector<Case> cases(nx::DType dt) {
  std::mt19937 rng(7);
  std::vector<Case> out;
  for (int i = 0; i < prim_count; ++i) {
    const Prim p = Prim(i);
    const PrimInfo& I = info(p);
    if ((I.flags & NoDiff) || !(I.accepts & F) || I.family == Family::collective) continue;
    auto [lo, hi] = domain(p);
    if (I.family == Family::unary || I.family == Family::convert) {
      Params q;
      q.dtype = nx::float64;
      out.push_back({p, {uniform(dt, {2, 3}, lo, hi, rng)}, q});
    } else if (I.family == Family::binary) {
      out.push_back({p, {uniform(dt, {2, 3}, lo, hi, rng), uniform(dt, {3}, lo, hi, rng)}, {}});
      if (p == Prim::maximum || p == Prim::minimum) {  // ties share the derivative
        Tensor same = uniform(dt, {3}, lo, hi, rng);
        out.push_back({p, {same, same * 1.}, {}});
      }
    } else if (I.family == Family::select) {
      out.push_back({p, {nx::create(nx::bool_, {3}, {1, 0, 1}), uniform(dt, {2, 3}, -2, 2, rng), uniform(dt, {3}, -2, 2, rng)}, {}});
    } else if (I.family == Family::reduce) {
      Params q;
      q.axes = {1};
      out.push_back({p, {uniform(dt, {2, 3}, 0.5, 2, rng)}, q});
    } else if (p == Prim::matmul) {
      out.push_back({p, {uniform(dt, {2, 2, 3}, -1, 1, rng), uniform(dt, {2, 3, 2}, -1, 1, rng)}, {}});
    } else if (p == Prim::solve) {  // diagonally dominant: well conditioned
      Tensor a = uniform(dt, {2, 3, 3}, -0.5, 0.5, rng) + nx::eye(dt, 3) * 3.;
      out.push_back({p, {a, uniform(dt, {2, 3, 2}, -1, 1, rng)}, {}});
    }  // cholesky needs symmetric perturbations: tests/test_linalg.cpp checks it
  }
  Tensor m = uniform(dt, {2, 3}, -2, 2, rng);
  auto layout = [&](Prim p, std::vector<Tensor> ops, auto&& set) {
    Params q;
    set(q);
    out.push_back({p, std::move(ops), q});
  };
  layout(Prim::reshape, {m}, [](Params& q) { q.shape = {3, 2}; });
  layout(Prim::transpose, {m}, [](Params& q) { q.axes = {1, 0}; });
  layout(Prim::broadcast, {nx::reshape(m, {2, 1, 3})}, [](Params& q) { q.shape = {2, 4, 3}; });
  layout(Prim::slice, {m}, [](Params& q) { q.starts = {0, 0}, q.stops = {2, 3}, q.steps = {1, 2}; });
  layout(Prim::pad, {m}, [](Params& q) { q.lo = {1, 0}, q.hi = {0, 2}, q.interior = {0, 1}, q.value = 5; });
  layout(Prim::concatenate, {m, m * 2.}, [](Params& q) { q.axis = 1; });
  layout(Prim::flip, {m}, [](Params& q) { q.axes = {0, 1}; });
  layout(Prim::take, {m, nx::create(nx::int32, {4}, {2, 0, 2, -1})}, [](Params& q) { q.axis = 1; });
  layout(Prim::scatter_add, {m, nx::create(nx::int32, {2}, {1, 1}), uniform(dt, {2, 2}, -1, 1, rng)},
         [](Params& q) { q.axis = 1; });
  layout(Prim::dynamic_slice, {m, nx::create(nx::int32, {2}, {1, 1})}, [](Params& q) { q.shape = {1, 2}; });
  layout(Prim::dynamic_update_slice, {m, uniform(dt, {1, 2}, -1, 1, rng), nx::create(nx::int32, {2}, {1, 0})},
         [](Params&) {});
  // The ranks' collectives in the world of one process a unit test runs in
  // (tests/ranks runs them on 1 to 4 processes).
  layout(Prim::ranks_sum, {m}, [](Params&) {});
  layout(Prim::ranks_gather, {m}, [](Params& q) { q.shape = {1}; });
  layout(Prim::ranks_scatter_sum, {nx::reshape(m, {1, 2, 3})}, [](Params& q) { q.shape = {1}; });
  layout(Prim::ranks_permute, {m}, [](Params& q) { q.starts = {0}, q.stops = {0}; });
  return out;
}

// One sample call of every primitive of the table but the collectives
// (which only a map computes: tests/test_vmap.cpp tests them there): the
// cases above, then float64 operands for those without a derivative (a key
// for random_bits), and cholesky.
inline std::vector<Case> samples() {
  std::vector<Case> out = cases(nx::float64);
  std::mt19937 rng(3);
  for (int i = 0; i < prim_count; ++i) {
    const Prim p = Prim(i);
    if (std::any_of(out.begin(), out.end(), [&](const Case& c) { return c.prim == p; })) continue;
    if (info(p).family == Family::collective) continue;  // (only a map computes them: test_vmap.cpp)
    Params q;
    Tensor m = uniform(nx::float64, {2, 3}, -2, 2, rng);
    switch (info(p).family) {
      case Family::unary: out.push_back({p, {m}, q}); break;
      case Family::binary: out.push_back({p, {m, uniform(nx::float64, {3}, -2, 2, rng)}, q}); break;
      case Family::reduce: q.axes = {1}, out.push_back({p, {m}, q}); break;
      case Family::arg: q.axis = 1, out.push_back({p, {m}, q}); break;
      case Family::random: q.shape = {2, 3}, out.push_back({p, {nx::random::key(5)}, q}); break;
      case Family::ranks: out.push_back({p, {nx::create(nx::int32, {3}, {4, -1, 0})}, q}); break;  // (ranks_index)
      default: {  // cholesky: a symmetric positive definite matrix
        Tensor a = uniform(nx::float64, {3, 3}, -1, 1, rng);
        out.push_back({p, {nx::matmul(a, nx::transpose(a)) + nx::eye(nx::float64, 3) * 3.}, q});
      }
    }
  }
  return out;
}

}  // namespace test
