// W4 (rune): the gradient of a 2-layer MLP loss and a training step, float32.
// Same model as the peers' raw-tensor variant (bench/peers/py/w4_mlp.py,
// cpp/w4_libtorch.cpp "raw tensors + manual SGD"):
//   h = tanh(x @ W1 + b1),  y = h @ W2 + b2,  loss = mean((y - t)^2)
//   x [128,784], t [128,10] standard normal (fixed seed), W1 [784,256] * 1/sqrt(784),
//   W2 [256,10] * 1/sqrt(256), b1, b2 zeros.
// Timed, STEPS calls per sample (as the peers):
//   (a) the gradient alone: rune::grad(loss, params), params a RUNE_TREE struct;
//   (b) a full training step: rune::value_and_grad, then manual SGD (lr 0.01),
//       p = p - lr * g for the four tensors.
// ms/step and GFLOP/s with the peers' matmul FLOP count per step (forward plus
// dW1, dW2, dh): FLOP_STEP = 2*B*(D*H + H*O) + 2*(D*H*B + H*O*B + B*O*H).
// Extras: the forward pass alone, the same gradient written by hand in plain nx
// ops (what the autodiff machinery costs over it), and a 1024^3 float32 matmul
// (the BLAS ceiling, as the peers' W4mm rows).
//
// Checks (# lines): rune's gradient against the hand-written backward pass in
// float32 and in float64; 20 SGD steps with each gradient end at the same
// parameters; the loss decreases over the training steps.
#include <rune/rune.hpp>

#include <tbb/info.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "mlp.hpp"

extern "C" int openblas_get_num_threads(void);
extern "C" char* openblas_get_config(void);

using bench::fmtd;
using nx::Tensor;

using mlp::B, mlp::D, mlp::H, mlp::O, mlp::LR, mlp::MLP, mlp::randn;
static const int STEPS = 50;  // steps (or gradient calls) per timed sample, as the peers
static const double FLOP_STEP = 2.0 * B * (D * H + H * O) + 2.0 * (D * H * B + H * O * B + B * O * H);

static double max_abs(const Tensor& a) { return nx::item(nx::max(nx::abs(nx::cast(a, nx::float64)))); }
static double max_abs_diff(const Tensor& a, const Tensor& b) {
  return max_abs(nx::cast(a, nx::float64) - nx::cast(b, nx::float64));
}

static std::string per_step(const bench::Stats& s, const char* unit) {
  const double per = s.med / STEPS;
  return fmtd("%.3f ms/", per * 1e3) + unit + fmtd(", %.1f GFLOP/s (matmul flops)", FLOP_STEP / per / 1e9);
}

int main() {
  std::printf("# W4 rune: tbb default concurrency=%d, openblas threads=%d (%s)\n", tbb::info::default_concurrency(),
              openblas_get_num_threads(), openblas_get_config());
  std::printf("# W4 rune: B=%lld D=%lld H=%lld O=%lld float32, %.1f MFLOP (matmul) per step\n", (long long)B,
              (long long)D, (long long)H, (long long)O, FLOP_STEP / 1e6);
  int failures = 0;

  std::mt19937 rng(0);
  const Tensor x = randn(rng, {B, D}, 1.0);
  const Tensor t = randn(rng, {B, O}, 1.0);
  const MLP p0 = mlp::initial(rng);

  auto loss = [&](const MLP& p) { return mlp::loss(p, x, t); };
  // The same gradient by hand, in plain nx ops (dy = 2 r / (B O); tanh' = 1 - h^2),
  // at the dtype of its inputs.
  auto manual = [](const Tensor& xs, const Tensor& ts, const MLP& p) {
    Tensor h = nx::tanh(nx::matmul(xs, p.W1) + p.b1);
    Tensor y = nx::matmul(h, p.W2) + p.b2;
    Tensor r = y - ts;
    Tensor dy = r * (2.0 / double(B * O));
    MLP g;
    g.W2 = nx::matmul(nx::transpose(h), dy);
    g.b2 = nx::sum(dy, {0});
    Tensor dz = nx::matmul(dy, nx::transpose(p.W2)) * (1.0 - h * h);
    g.W1 = nx::matmul(nx::transpose(xs), dz);
    g.b1 = nx::sum(dz, {0});
    return std::pair{nx::mean(r * r), g};
  };
  const auto sgd = mlp::sgd;

  // ---- checks: the gradient against the hand-written backward pass
  {
    MLP g = rune::grad(loss, p0);
    auto [l32, m32] = manual(x, t, p0);
    auto to64 = [](const Tensor& a) { return nx::cast(a, nx::float64); };
    MLP p64{to64(p0.W1), to64(p0.b1), to64(p0.W2), to64(p0.b2)};
    auto [l64, m64] = manual(to64(x), to64(t), p64);
    const char* names[] = {"W1", "b1", "W2", "b2"};
    const Tensor* gr[] = {&g.W1, &g.b1, &g.W2, &g.b2};
    const Tensor* mr[] = {&m32.W1, &m32.b1, &m32.W2, &m32.b2};
    const Tensor* dr[] = {&m64.W1, &m64.b1, &m64.W2, &m64.b2};
    bool shapes = true;
    double worst_rel = 0;
    for (int i = 0; i < 4; ++i) {
      shapes = shapes && gr[i]->dtype() == nx::float32 && gr[i]->shape() == mr[i]->shape();
      const double scale = max_abs(*dr[i]);
      const double d_manual = max_abs_diff(*gr[i], *mr[i]), d_rune64 = max_abs_diff(*gr[i], *dr[i]),
                   d_manual64 = max_abs_diff(*mr[i], *dr[i]);
      worst_rel = std::max(worst_rel, d_manual / scale);
      std::printf("# W4 rune grad check d%s: max|g| = %.4g; max |rune - hand-written float32| = %.3g; "
                  "vs hand-written float64: rune %.3g, hand-written float32 %.3g\n",
                  names[i], scale, d_manual, d_rune64, d_manual64);
    }
    const bool ok = shapes && worst_rel <= 1e-4 && std::fabs(nx::item(loss(p0)) - nx::item(l64)) <= 1e-5;
    std::printf("# W4 rune grad check: loss %.7f (float64 reference %.7f); largest |rune - hand-written| / max|g| "
                "= %.3g (limit 1e-4): %s\n",
                nx::item(loss(p0)), nx::item(l64), worst_rel, ok ? "ok" : "WRONG");
    failures += !ok;

    // 20 SGD steps with rune's gradient and with the hand-written one.
    MLP pa = p0, pb = p0;
    for (int i = 0; i < 20; ++i) {
      pa = sgd(pa, rune::grad(loss, pa));
      pb = sgd(pb, manual(x, t, pb).second);
    }
    const double dw = std::max({max_abs_diff(pa.W1, pb.W1), max_abs_diff(pa.b1, pb.b1),
                                max_abs_diff(pa.W2, pb.W2), max_abs_diff(pa.b2, pb.b2)});
    const bool ok2 = dw <= 1e-5;
    std::printf("# W4 rune: after 20 SGD steps, max |params(rune grad) - params(hand-written grad)| = %.3g; "
                "loss %.6f vs %.6f: %s\n",
                dw, nx::item(loss(pa)), nx::item(loss(pb)), ok2 ? "ok" : "WRONG");
    failures += !ok2;
  }

  // ---- (a) the gradient alone, at fixed parameters p0
  const std::string note = "tbb " + std::to_string(tbb::info::default_concurrency()) + " thr, openblas " +
                           std::to_string(openblas_get_num_threads()) + " thr; " + std::to_string(STEPS) +
                           " calls per sample";
  bench::Stats sg = bench::measure(
      [&] {
        for (int i = 0; i < STEPS; ++i) {
          MLP g = rune::grad(loss, p0);
          bench::keep(g);
        }
      },
      11, 2);
  bench::report("W4", "rune grad (rune::grad(loss, params))", sg, per_step(sg, "call"),
                note + "; forward + backward, fresh gradients, no update");

  // ---- (b) the training step: value_and_grad + manual SGD
  MLP p = p0;
  double l_first = 0, l_last = 0;
  int steps_done = 0;
  auto step = [&] {
    auto [l, g] = rune::value_and_grad(loss, p);
    p = sgd(p, g);
    ++steps_done;
    return l;
  };
  l_first = nx::item(step());
  bench::Stats ss = bench::measure(
      [&] {
        for (int i = 0; i < STEPS; ++i) {
          Tensor l = step();
          bench::keep(l);
        }
      },
      11, 2);
  bench::report("W4", "rune training step (value_and_grad + manual SGD)", ss, per_step(ss, "step"),
                note.substr(0, note.find(';')) + "; " + std::to_string(STEPS) + " steps per sample; lr 0.01");
  l_last = nx::item(step());
  {
    const bool ok = l_last < 0.5 * l_first && std::isfinite(l_last);
    std::printf("# W4 rune loss at step 1: %.6f; at step %d: %.6f (must fall below half): %s\n", l_first,
                steps_done, l_last, ok ? "ok" : "WRONG");
    failures += !ok;
  }

  // ---- (c) the training step compiled: value_and_grad and the SGD update in
  // one rune::jit, the parameters donated (their storage is the call's)
  auto train = rune::jit([&](const MLP& q) {
    auto [l, g] = rune::value_and_grad(loss, q);
    return std::pair{l, sgd(q, g)};
  });
  auto fresh = [](const MLP& q) {  // a copy in storage of its own (negation is exact)
    return MLP{-(-q.W1), -(-q.b1), -(-q.W2), -(-q.b2)};
  };
  auto donated = [](const MLP& q) {
    return MLP{nx::donate(q.W1), nx::donate(q.b1), nx::donate(q.W2), nx::donate(q.b2)};
  };
  {
    MLP q = p0, e = p0;
    const auto start = std::chrono::steady_clock::now();
    auto [l0, q1] = train(donated(fresh(q)));
    const double first_ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1e3;
    std::printf("# W4 rune jit first call (trace + compile + run) of the training step: %.1f ms\n", first_ms);
    auto [le, ge] = rune::value_and_grad(loss, e);
    const MLP e1 = sgd(e, ge);
    const bool same = max_abs_diff(q1.W1, e1.W1) == 0 && max_abs_diff(q1.b1, e1.b1) == 0 &&
                      max_abs_diff(q1.W2, e1.W2) == 0 && max_abs_diff(q1.b2, e1.b2) == 0 &&
                      nx::item(l0) == nx::item(le);
    std::printf("# W4 rune compiled step equals the eager step bit for bit: %s\n", same ? "ok" : "WRONG");
    failures += !same;
  }
  MLP pc = fresh(p0);
  bench::Stats sc = bench::measure(
      [&] {
        for (int i = 0; i < STEPS; ++i) {
          auto [l, next] = train(donated(pc));
          pc = next;
          bench::keep(l);
        }
      },
      11, 2);
  bench::report("W4", "rune compiled training step (jit of value_and_grad + SGD, params donated)", sc,
                per_step(sc, "step"),
                note.substr(0, note.find(';')) + "; " + std::to_string(STEPS) + " steps per sample; lr 0.01");

  // ---- extras: the forward pass alone, the hand-written backward pass
  bench::Stats sf = bench::measure(
      [&] {
        for (int i = 0; i < STEPS; ++i) {
          Tensor l = loss(p0);
          bench::keep(l);
        }
      },
      11, 2);
  bench::report("W4", "[extra] rune forward only (loss(params))", sf, fmtd("%.3f ms/call", sf.med / STEPS * 1e3),
                note + "; the forward third of the FLOPs");
  bench::Stats sm = bench::measure(
      [&] {
        for (int i = 0; i < STEPS; ++i) {
          auto r = manual(x, t, p0);
          bench::keep(r);
        }
      },
      11, 2);
  bench::report("W4", "[extra] rune nx hand-written backward (no autodiff)", sm, per_step(sm, "call"),
                note + "; same ops as the gradient, written out");

  // ---- extra: the BLAS ceiling, 1024^3 float32 matmul (as the peers' W4mm rows)
  {
    const std::int64_t M = 1024;
    std::mt19937 r2(1);
    const Tensor a = randn(r2, {M, M}, 1.0), b = randn(r2, {M, M}, 1.0);
    bench::Stats sb = bench::measure([&] { Tensor c = nx::matmul(a, b); bench::keep(c); }, 11, 2);
    bench::report("W4mm", "[extra] rune nx::matmul 1024^3 float32", sb,
                  fmtd("%.1f GFLOP/s", 2.0 * double(M) * M * M / sb.med / 1e9),
                  "new result per call; OpenBLAS sgemm, " + std::to_string(openblas_get_num_threads()) + " thr");
  }

  if (failures) std::printf("# W4 rune: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
