// random_bits: the uint32 words of a key's Threefry-2x32-20 stream
// (ops/threefry.hpp). Element 2j and 2j + 1 of the result (C order) are the
// two words of the block at counter j, as (j mod 2^32, j div 2^32); an odd
// count drops the last block's second word, so a shorter draw is a prefix of
// a longer one. A key uint32 [..., 2] gives each of its keys its own stream:
// the result is uint32 [..., *params.shape] (the batching rule's single call).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "ops/kernels/iterate.hpp"
#include "ops/threefry.hpp"
#include "ops/type_checks.hpp"

namespace nx::ops {
namespace {

TensorType bits_type(Prim p, std::span<const Tensor> x, const Params& params) {
  const Shape& key = x[0].shape();
  if (x[0].dtype() != uint32 || key.empty() || key.back() != 2)
    fail(info(p).api, "the key must be uint32 [2], got " + describe(x[0]));
  Shape out(key.begin(), key.end() - 1);
  out.insert(out.end(), params.shape.begin(), params.shape.end());
  return {uint32, out, x[0].placement()};
}

void bits_into(Prim, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  const Tensor keys = contiguous(x[0]);
  const std::int64_t n = numel(params.shape), blocks = (n + 1) / 2;
  const std::int64_t total = blocks * (keys.numel() / 2);
  const std::uint32_t* key = data_of<std::uint32_t>(keys);
  std::uint32_t* words = data_of<std::uint32_t>(out);
  // Every block is computed alone, so any cut of the blocks over threads
  // gives the same bits.
  auto run = [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t i = r.begin(); i < r.end(); ++i) {
      const std::int64_t k = i / blocks, j = i % blocks;
      const Words2x32 w = threefry2x32({key[2 * k], key[2 * k + 1]}, {std::uint32_t(j), std::uint32_t(j >> 32)});
      std::uint32_t* row = words + k * n;
      row[2 * j] = w[0];
      if (2 * j + 1 < n) row[2 * j + 1] = w[1];
    }
  };
  const tbb::blocked_range<std::int64_t> all(0, total, chunk_elements);
  if (total < parallel_grain) run(all);
  else tbb::parallel_for(all, run);
}

}  // namespace

void register_random(RuleTable& table) {
  // (random bits have no derivative: a symbolic zero tangent)
  table.define(Prim::random_bits,
               {.type = &bits_type, .eager = &eager_into<&bits_into>, .jvp = &no_tangent, .into = &bits_into});
}

}  // namespace nx::ops
