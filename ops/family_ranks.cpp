// Collectives over the ranks of an MPI job (rune::ranks()): their type,
// eager (into the planned buffer), jvp and transpose rules; the batching
// rule is in ops/batching.cpp. The exchanges are ops/world.cpp's; every
// addition is nx::sum's over a leading axis of one row per rank
// (ops/sum_rows.hpp), so a sum over P ranks has the bits of nx::sum over
// P lanes (rune::psum under rune::vmap) whatever the SIMD width and however
// the work is split.
//
//   ranks_sum(x):         every rank's x summed (rune::psum)
//   ranks_gather(x):      [P, x's shape...], every rank's x (rune::all_gather)
//   ranks_scatter_sum(y): y's shape without its axis 0 of P rows: rank r gets
//                         the sum over the ranks q of row r of q's y (the
//                         gather's transpose)
//   ranks_permute(x):     rank stops[k] gets the x of rank starts[k]; a rank
//                         no pair names as a receiver gets zeros (rune::ppermute)
//   ranks_index(x):       x + the rank of the process running it (no exchange:
//                         rune::lane_index(rune::ranks()) is ranks_index(0), so
//                         a compiled or saved program reads its runner's rank)
//
// The gather and its transpose carry the world's size as shape=[P], checked
// against the world they run in (a program read from text may come from
// another job).
#include <algorithm>
#include <string>

#include <boost/container/small_vector.hpp>

#include "ops/concrete.hpp"
#include "ops/derivatives.hpp"
#include "ops/errors.hpp"
#include "ops/sum_rows.hpp"
#include "ops/type_checks.hpp"
#include "ops/world.hpp"

namespace nx::ops {
namespace {

// Up to this many bytes of rows (P times the operand), a sum gathers every
// rank's operand and sums all of it on each rank; above, each rank sums a
// P-th part of the elements and the parts are gathered (the traffic of a
// ring allreduce).
constexpr std::size_t gathered_sum_bytes = 64 * 1024;

using Sizes = boost::container::small_vector<std::size_t, 16>;  // (one per rank: up to 16 without allocating)
std::span<const std::size_t> all(const Sizes& s) { return {s.data(), s.size()}; }

std::string ranks_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); }

void check_rank(Prim p, std::int64_t r) {
  if (r < 0 || r >= world::size())
    fail(info(p).api, "rank " + std::to_string(r) + " is outside a world of " + ranks_text(world::size()));
}

std::int64_t ranks_in(Prim p, const Params& params) {
  if (params.shape.size() != 1 || params.shape[0] < 1)
    fail(info(p).api, "the rank count is shape=[count], got shape=" + to_string(params.shape));
  if (params.shape[0] != world::size())
    fail(info(p).api, "the program was traced on " + ranks_text(params.shape[0]) + "; this world has " +
                          ranks_text(world::size()));
  return params.shape[0];
}

TensorType same_type(Prim p, std::span<const Tensor> x, const Params& params) {
  check_accepts(p, x[0]);
  if (p == Prim::ranks_permute) {
    if (params.starts.size() != params.stops.size())
      fail(info(p).api, "the senders (starts) and receivers (stops) differ in number");
    for (std::size_t k = 0; k < params.starts.size(); ++k) {
      check_rank(p, params.starts[k]);
      check_rank(p, params.stops[k]);
      if (std::find(params.stops.begin(), params.stops.begin() + std::ptrdiff_t(k), params.stops[k]) !=
          params.stops.begin() + std::ptrdiff_t(k))
        fail(info(p).api, "rank " + std::to_string(params.stops[k]) + " is named twice as a receiver");
    }
  }
  return type_of(x[0]);
}

TensorType gather_type(Prim p, std::span<const Tensor> x, const Params& params) {
  return gathered_type(p, x[0], ranks_in(p, params));
}
TensorType scatter_sum_type(Prim p, std::span<const Tensor> x, const Params& params) {
  return row_sum_type(p, x[0], ranks_in(p, params), "rank");
}

// The divergence check (world.hpp), its signature written only when it is on.
void agree(Prim p, const Tensor& x, const Params& params) {
  if (!world::checking()) return;
  std::string operand = describe(x);
  if (p == Prim::ranks_permute) operand += ", pairs " + to_string(params.starts) + " -> " + to_string(params.stops);
  world::agree(info(p).api, operand);
}

// The operand in C order, apart from `out` (MPI reads and writes distinct
// memory).
Tensor sent(const Tensor& x, const Tensor& out) {
  Tensor in = contiguous(x);
  return base_address(*in.impl()) == base_address(*out.impl()) ? copy(in) : in;
}

char* bytes_of(const Tensor& t) { return base_address(*t.impl()); }

void sum_into(Prim p, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  agree(p, x[0], params);
  // (MPI_Allreduce sums in place where the planned buffer is the operand's)
  const Tensor operand = contiguous(x[0]);
  const DType dt = operand.dtype();
  const auto n = std::size_t(operand.numel()), item = size_of(dt), ranks = std::size_t(world::size());
  if (world::fast_sums() && world::mpi_sum(bytes_of(operand), bytes_of(out), n, dt)) return;
  // Two terms commute, so MPI's sum of two ranks, each addition started
  // from +0, is the fixed order's (docs/accuracy.md; NaN payloads aside).
  if (ranks == 2 && world::mpi_sum(bytes_of(operand), bytes_of(out), n, dt, true)) return;
  const Tensor in = sent(operand, out);
  if (ranks == 1 || n < ranks || n * item * ranks <= gathered_sum_bytes) {
    Shape shape = in.shape();
    shape.insert(shape.begin(), std::int64_t(ranks));
    const Tensor rows = make_tensor(dt, shape);
    world::gather(bytes_of(in), bytes_of(rows), n * item);
    return sum_rows_into(rows, out);
  }
  // Rank r sums elements [offsets[r], offsets[r] + counts[r]) of every rank's x.
  Sizes counts, offsets;
  for (std::size_t r = 0, at = 0; r < ranks; ++r) {
    counts.push_back((n / ranks + (r < n % ranks ? 1 : 0)) * item);
    offsets.push_back(at);
    at += counts.back();
  }
  const std::size_t mine = counts[std::size_t(world::rank())];
  const Tensor parts = make_tensor(dt, {std::int64_t(ranks), std::int64_t(mine / item)});
  world::scatter_parts(bytes_of(in), all(counts), all(offsets), bytes_of(parts), mine);
  const Tensor part_sum = make_tensor(dt, {std::int64_t(mine / item)});
  sum_rows_into(parts, part_sum);
  world::gather_varying(bytes_of(part_sum), bytes_of(out), all(counts), all(offsets));
}

void gather_into(Prim p, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  agree(p, x[0], params);
  const Tensor in = sent(x[0], out);
  world::gather(bytes_of(in), bytes_of(out), std::size_t(in.numel()) * size_of(in.dtype()));
}

void scatter_sum_into(Prim p, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  const auto ranks = std::size_t(x[0].shape()[0]);  // (the world's size: checked by the type rule)
  agree(p, x[0], params);
  const Tensor in = sent(x[0], out);
  if (ranks == 1) return sum_rows_into(in, out);
  const std::size_t row = std::size_t(out.numel()) * size_of(in.dtype());
  Sizes counts(ranks, row), offsets;
  for (std::size_t r = 0; r < ranks; ++r) offsets.push_back(r * row);
  Shape shape = out.shape();
  shape.insert(shape.begin(), std::int64_t(ranks));
  const Tensor rows = make_tensor(in.dtype(), shape);  // (row q: rank q's row for this rank)
  world::scatter_parts(bytes_of(in), all(counts), all(offsets), bytes_of(rows), row);
  sum_rows_into(rows, out);
}

void permute_into(Prim p, std::span<const Tensor> x, const Params& params, const Tensor& out) {
  agree(p, x[0], params);
  const Tensor in = sent(x[0], out);
  int to = -1, from = -1;
  for (std::size_t k = 0; k < params.starts.size(); ++k) {
    if (params.starts[k] == world::rank()) to = int(params.stops[k]);
    if (params.stops[k] == world::rank()) from = int(params.starts[k]);
  }
  world::exchange(bytes_of(in), to, bytes_of(out), from, std::size_t(in.numel()) * size_of(in.dtype()));
  if (from < 0) fill(out, 0);
}

void index_into(Prim, std::span<const Tensor> x, const Params&, const Tensor& out) {
  const Tensor operands[] = {x[0], filled(x[0].dtype(), {}, double(world::rank()))};
  rules(Prim::add).into(Prim::add, std::span<const Tensor>(operands), Params{}, out);
}

// The four exchanges are linear in their operand: the tangent goes the same way.
Tensor linear_jvp(Prim p, std::span<const Tensor>, std::span<const Tensor> t, const Params& params, const Tensor&) {
  return zero(t[0]) ? Tensor() : bind(p, {t[0]}, params);
}

void transpose(Prim p, const Tensor& ct, std::span<const Tensor>, std::span<const TensorType>, const Params& params,
               std::span<Tensor> cts) {
  switch (p) {
    case Prim::ranks_gather: cts[0] = bind(Prim::ranks_scatter_sum, {ct}, params); return;
    case Prim::ranks_scatter_sum: cts[0] = bind(Prim::ranks_gather, {ct}, params); return;
    case Prim::ranks_permute: {  // (the inverse permutation)
      Params inverse = params;
      std::swap(inverse.starts, inverse.stops);
      cts[0] = bind(p, {ct}, inverse);
      return;
    }
    default: cts[0] = bind(p, {ct}, params); return;  // (psum's transpose is psum, as in JAX's pmap)
  }
}

}  // namespace

void register_ranks(RuleTable& table) {
  table.define(Prim::ranks_sum, {.type = &same_type, .eager = &eager_into<&sum_into>, .jvp = &linear_jvp,
                                 .transpose = &transpose, .into = &sum_into});
  table.define(Prim::ranks_gather, {.type = &gather_type, .eager = &eager_into<&gather_into>, .jvp = &linear_jvp,
                                    .transpose = &transpose, .into = &gather_into});
  table.define(Prim::ranks_scatter_sum, {.type = &scatter_sum_type, .eager = &eager_into<&scatter_sum_into>,
                                         .jvp = &linear_jvp, .transpose = &transpose, .into = &scatter_sum_into});
  table.define(Prim::ranks_permute, {.type = &same_type, .eager = &eager_into<&permute_into>, .jvp = &linear_jvp,
                                     .transpose = &transpose, .into = &permute_into});
  table.define(Prim::ranks_index,
               {.type = &same_type, .eager = &eager_into<&index_into>, .jvp = &no_tangent, .into = &index_into});
}

}  // namespace nx::ops
