// Fused kernels: a fused elementwise computation run over blocks of its
// outputs. Each step is the eager kernels' row loop for its primitive, run
// on a block at a time (1,024 elements, in the caches), so an element's
// bits are eager's whatever the fusion, the block or the thread. Blocks
// run on oneTBB above the eager kernels' grain, in chunks fixed by the
// size alone.
//
// A kernel's reductions reduce rows of its values (all of them, or the
// trailing axes), folding each block as soon as it is computed, in the
// eager reduction's segments (one state per segment; rows that fit a block
// in one piece), and combine the segments' results as eager does: the same
// bits, one pass.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include <boost/container/small_vector.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "ops/concrete.hpp"
#include "ops/kernels/iterate.hpp"
#include "ops/reduce_row.hpp"
#include "vm/machine.hpp"
#include "vm/memory_plan.hpp"

namespace rune::vm {

namespace {

constexpr std::int64_t block = FusedKernel::block;
constexpr std::size_t align = 64;
using Place = FusedKernel::Place;
// Each slot's base address in one run (a kernel of up to 32 slots finds
// them in place; a larger one in its thread's frame memory).
using Bases = boost::container::small_vector<char*, 32, FrameAllocator<char*>>;

static_assert(block % nx::ops::kernels::reduce_piece == 0 && nx::ops::reduce_segment % block == 0,
              "a reduction's pieces are whole blocks, its segments too");

// `bytes` of a thread's scratch `buffer`, aligned to 64.
unsigned char* scratch(std::vector<unsigned char>& buffer, std::size_t bytes) {
  if (buffer.size() < bytes + align) buffer.resize(bytes + align);
  return buffer.data() + (align - reinterpret_cast<std::uintptr_t>(buffer.data()) % align) % align;
}

// The thread's block buffers: `bytes` of them.
unsigned char* block_buffers(std::size_t bytes) {
  thread_local std::vector<unsigned char> buffer;
  return bytes > 0 ? scratch(buffer, bytes) : nullptr;
}

// `count` copies of the element of `size` bytes at `element`, at `out`.
void spread(const char* element, std::size_t size, std::int64_t count, char* out) {
  auto fill = [&](auto word) {
    std::memcpy(&word, element, sizeof word);
    std::fill_n(reinterpret_cast<decltype(word)*>(out), count, word);
  };
  switch (size) {
    case 1: return fill(std::uint8_t{});
    case 2: return fill(std::uint16_t{});
    case 4: return fill(std::uint32_t{});
    case 8: return fill(std::uint64_t{});
    default:
      for (std::int64_t k = 0; k < count; ++k) std::memcpy(out + std::size_t(k) * size, element, size);
  }
}

// `rows` rows of `row` copies each of the consecutive elements of `size`
// bytes at `elements`, at `out`. (Rows of two, a [n, 1] operand of a
// kernel of [n, 2] points, in one loop: a call a row costs more than its
// copies.)
template <class Word> void spread_pairs(const void* elements, std::int64_t rows, void* out) {
  typedef Word __attribute__((__may_alias__)) Bits;  // (the words of elements of any type)
  const Bits* __restrict from = static_cast<const Bits*>(elements);
  Bits* __restrict to = static_cast<Bits*>(out);
  for (std::int64_t r = 0; r < rows; ++r) to[2 * r] = to[2 * r + 1] = from[r];
}

void spread_rows(const char* elements, std::size_t size, std::int64_t row, std::int64_t rows, char* out) {
  auto fill = [&](auto word) {
    using Word = decltype(word);
    Word* to = reinterpret_cast<Word*>(out);
    if (row == 2)  // (in a loop the compiler vectorizes)
      return spread_pairs<Word>(elements, rows, to);
    for (std::int64_t r = 0; r < rows; ++r, elements += sizeof(Word), to += row) {
      std::memcpy(&word, elements, sizeof word);
      std::fill_n(to, row, word);
    }
  };
  switch (size) {
    case 4: return fill(std::uint32_t{});
    case 8: return fill(std::uint64_t{});
    default:
      for (std::int64_t r = 0; r < rows; ++r) spread(elements + std::size_t(r) * size, size, row, out + std::size_t(r * row) * size);
  }
}

// Step s on a block of n elements (of whole rows of `row` when the step is
// over its rows) whose slots are at `at`, their strides in `places`.
inline void run_step(const FusedKernel::Step& s, const Place* places, char* const* at, std::int64_t n,
                     std::int64_t row) {
  using Over = FusedKernel::Step::Over;
  switch (s.over) {
    case Over::elements: break;
    case Over::rows: n /= row; break;
    case Over::reduce: return s.row.reduce(n / row, row, at[s.in[0]], at[s.out]);
    case Over::spread: return spread_rows(at[s.in[0]], places[s.out].size, row, n / row, at[s.out]);
    case Over::paired: return;  // (Blocks::paired: it reads its operands where their indices point)
  }
  switch (s.family) {
    case nx::ops::Family::binary:
      s.row.binary(n, at[s.in[0]], places[s.in[0]].stride, at[s.in[1]], places[s.in[1]].stride, at[s.out]);
      break;
    case nx::ops::Family::select:
      s.row.select(n, at[s.in[0]], places[s.in[0]].stride, at[s.in[1]], places[s.in[1]].stride, at[s.in[2]],
                   places[s.in[2]].stride, at[s.out]);
      break;
    default: s.row.unary(n, at[s.in[0]], places[s.in[0]].stride, at[s.out]); break;
  }
}

// The kernel's rows operands repeated over a block of whole rows, in the
// calling thread's buffer (read by every block, on every thread, while the
// kernel runs).
char* rows_buffer(std::size_t bytes) {
  thread_local std::vector<unsigned char> buffer;
  return reinterpret_cast<char*>(scratch(buffer, bytes));
}

// The running state of one reduction.
struct alignas(64) ReduceState {
  unsigned char bytes[nx::ops::kernels::reduce_state_bytes];
};

// A reduction's result (of up to 16 bytes: complex128).
struct Partial {
  alignas(16) unsigned char bytes[16];
};

// A reduction fed pieces of any length: whole groups of reduce_piece
// elements go to the kernel table's add, the rest waits for the next piece,
// so every add but the last is whole groups (the pieces' contract) and the
// result is the bits of the whole row reduced at once.
struct Folder {
  ReduceState state;
  alignas(64) unsigned char carry[nx::ops::kernels::reduce_piece * 16];
  std::int64_t carried = 0;

  void start(const nx::ops::kernels::ReducePieces& p) {
    p.start(state.bytes);
    carried = 0;
  }
  void add(const nx::ops::kernels::ReducePieces& p, std::int64_t n, const char* in, std::size_t size) {
    constexpr std::int64_t group = nx::ops::kernels::reduce_piece;
    if (carried > 0) {
      const std::int64_t take = std::min(n, group - carried);
      std::memcpy(carry + std::size_t(carried) * size, in, std::size_t(take) * size);
      carried += take, in += std::size_t(take) * size, n -= take;
      if (carried < group) return;
      p.add(group, carry, state.bytes);
      carried = 0;
    }
    const std::int64_t whole = n - n % group;
    if (whole > 0) p.add(whole, in, state.bytes);
    carried = n - whole;
    std::memcpy(carry, in + std::size_t(whole) * size, std::size_t(carried) * size);
  }
  // (a segment's partial result, or the row's result)
  void finish(const nx::ops::kernels::ReducePieces& p, void* out, bool partial) {
    if (carried > 0) p.add(carried, carry, state.bytes);
    (partial ? p.partial : p.finish)(state.bytes, out);
  }
};

// The kernel's elements [begin, begin + n) of an operand at `base` read
// with `strides` along the kernel's axes (`shape`), at `out`: runs along the
// last axis copied (stride 1: a C-order operand) or spread (stride 0).
void gather(const char* base, std::size_t size, const nx::Shape& shape, std::span<const std::int64_t> strides,
            std::int64_t begin, std::int64_t n, char* out) {
  const std::size_t last = shape.size() - 1;
  boost::container::small_vector<std::int64_t, 6> index(shape.size());
  std::int64_t offset = 0, rest = begin;
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
    offset += index[d] * strides[d];
  }
  for (std::int64_t done = 0; done < n;) {
    const std::int64_t run = std::min(shape[last] - index[last], n - done);
    const char* from = base + offset * std::int64_t(size);
    if (strides[last] == 0) spread(from, size, run, out + std::size_t(done) * size);
    else std::memcpy(out + std::size_t(done) * size, from, std::size_t(run) * size);
    done += run;
    offset += run * strides[last];
    index[last] += run;
    for (std::size_t d = last; d > 0 && index[d] == shape[d]; --d) {  // (carried into the axes before)
      offset += strides[d - 1] - shape[d] * strides[d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// The rows of a gather or scatter in the kernel's elements [begin, begin +
// n) (whole rows of r.row: compile.cpp), slab by slab: each(slab, first
// index, count, rows before them in the block).
template <class Each>
void each_slab(const FusedKernel::Rows& r, std::int64_t begin, std::int64_t n, Each each) {
  const std::size_t per_slab = std::size_t(r.count);
  std::size_t q = std::size_t(begin / r.row);
  const std::size_t end = std::size_t((begin + n) / r.row), first = q;
  while (q < end) {
    const std::size_t at = q % per_slab, count = std::min(per_slab - at, end - q);
    each(q / per_slab, at, count, q - first);
    q += count;
  }
}

// The kernel's blocks on one thread: its steps computed on elements
// [begin, begin + n), n <= block, the temporaries in the thread's buffers.
// A kernel in rows (m.row) computes blocks of whole rows, or parts of one.
class Blocks {
 public:
  // (scattered: the buffers of the kernel's scatters' results; loop: the
  // kernel's steps over a block in machine code, when it is promoted)
  Blocks(const FusedKernel& m, const Bases& bases, char* const* scattered = nullptr,
         native::BlockLoop loop = nullptr)
      : m_(m), places_(m.places.data()), bases_(bases.data()), scattered_(scattered),
        temps_(block_buffers(m.block_bytes)), loop_(loop) {}

  // Where slot k's elements of the block from `begin` are.
  char* ptr(std::int32_t k, std::int64_t begin) const {
    const Place& p = places_[k];
    char* const base = bases_[k];
    switch (p.kind) {
      case Place::Kind::memory: return base + begin * p.stride * std::int64_t(p.size);
      case Place::Kind::repeated: return base;
      case Place::Kind::row: return base + (begin % m_.row) * std::int64_t(p.size);
      case Place::Kind::column:
      case Place::Kind::per_row: return base + (begin / m_.row) * std::int64_t(p.size);
      default: return reinterpret_cast<char*>(temps_ + p.offset);  // (temporary, columns, gathered)
    }
  }

  // (next, next_n: the block to come, whose operands are asked of the
  // caches while this one computes)
  void compute(std::int64_t begin, std::int64_t n, std::int64_t next = 0, std::int64_t next_n = 0) const {
    for (std::int32_t k : m_.spread) {  // (a block of whole rows: each row's element along it)
      const Place& p = m_.places[std::size_t(k)];
      spread_rows(bases_[std::size_t(k)] + (begin / m_.row) * std::int64_t(p.size), p.size, m_.row, n / m_.row,
                  reinterpret_cast<char*>(temps_ + p.offset));
    }
    for (const FusedKernel::Gathered& g : m_.gathered) {
      const Place& p = m_.places[std::size_t(g.slot)];
      gather(bases_[std::size_t(g.slot)], p.size, m_.shape, {g.strides.data(), g.strides.size()}, begin, n,
             reinterpret_cast<char*>(temps_ + p.offset));
    }
    for (const FusedKernel::Indexed& g : m_.indexed) {
      if (g.in_place) continue;
      const Place& p = m_.places[std::size_t(g.slot)];
      const char* indices = bases_[std::size_t(m_.slots[std::size_t(g.slot)].indices)];
      char* out = reinterpret_cast<char*>(temps_ + p.offset);
      each_slab(g.rows, begin, n, [&](std::size_t slab, std::size_t first, std::size_t count, std::size_t done) {
        const std::size_t row_bytes = std::size_t(g.rows.row) * p.size;
        g.gather(out + done * row_bytes, bases_[std::size_t(g.slot)] + slab * std::size_t(g.rows.length) * row_bytes,
                 indices, first, count, std::size_t(g.rows.length), row_bytes);
      });
    }
    const std::size_t slots = m_.slots.size();
    Bases at(slots, boost::container::default_init);
    for (std::size_t k = 0; k < slots; ++k) at[k] = ptr(std::int32_t(k), begin);
    const FusedKernel::Step* const steps = m_.steps.data();
    const std::size_t count = m_.steps.size();
    const bool fetch = next_n > 0 && !m_.fetched.empty();
    if (loop_) {
      loop_(at.data(), n);  // (which asks for the next block's elements as it goes)
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        if (fetch) prefetch(next, next_n, i);
        if (steps[i].over == FusedKernel::Step::Over::paired) paired(steps[i], begin, n, at[std::size_t(steps[i].out)]);
        else run_step(steps[i], places_, at.data(), n, m_.row);
      }
    }
    for (std::size_t k = 0; k < m_.scatters.size(); ++k) {
      const FusedKernel::Scattered& s = m_.scatters[k];
      const std::size_t size = places_[s.slot].size, row_bytes = std::size_t(s.rows.row) * size;
      each_slab(s.rows, begin, n, [&](std::size_t slab, std::size_t first, std::size_t count, std::size_t done) {
        s.scatter(scattered_[k] + slab * std::size_t(s.rows.length) * row_bytes, at[std::size_t(s.slot)] + done * row_bytes,
                  bases_[std::size_t(s.indices)], first, count, std::size_t(s.rows.length), std::size_t(s.rows.row),
                  row_bytes, s.add);
      });
    }
  }

  // A paired step on the block's elements [begin, begin + n): its two
  // gathered operands read where their indices point, slab by slab (both
  // take rows of one length, slabs of one count: compile.cpp).
  void paired(const FusedKernel::Step& s, std::int64_t begin, std::int64_t n, char* out) const {
    const FusedKernel::Indexed& a = indexed(s.in[0]);
    const FusedKernel::Indexed& b = indexed(s.in[1]);
    const std::size_t row_bytes = std::size_t(a.rows.row) * places_[s.out].size;
    const char* const indices_a = bases_[std::size_t(m_.slots[std::size_t(a.slot)].indices)];
    const char* const indices_b = bases_[std::size_t(m_.slots[std::size_t(b.slot)].indices)];
    each_slab(a.rows, begin, n, [&](std::size_t slab, std::size_t first, std::size_t count, std::size_t done) {
      s.row.paired(out + done * row_bytes, bases_[std::size_t(a.slot)] + slab * std::size_t(a.rows.length) * row_bytes,
                   indices_a, std::size_t(a.rows.length),
                   bases_[std::size_t(b.slot)] + slab * std::size_t(b.rows.length) * row_bytes, indices_b,
                   std::size_t(b.rows.length), first, count, std::size_t(a.rows.row));
    });
  }
  const FusedKernel::Indexed& indexed(std::int32_t slot) const {
    return *std::find_if(m_.indexed.begin(), m_.indexed.end(), [slot](const auto& g) { return g.slot == slot; });
  }

  // Asks the caches for step `step`'s share of the inputs and outputs of
  // elements [begin, begin + n). A block's steps read its inputs only at the
  // start and write its outputs at the end, in bursts the hardware's
  // prefetchers do not follow (nor past a page): asked for a share per
  // step, the next block's lines arrive while this one computes.
  // (Inlined: GCC drops the call of a function that only prefetches.)
  [[gnu::always_inline]] void prefetch(std::int64_t begin, std::int64_t n, std::size_t step) const {
    const auto [first, last] = m_.fetch_lines[step];
    for (std::int32_t k : m_.fetched) {
      const char* p = ptr(k, begin);
      const std::size_t lines = (std::size_t(n) * m_.places[std::size_t(k)].size + 63) / 64;
      for (std::size_t line = first; line < std::min<std::size_t>(last, lines); ++line) __builtin_prefetch(p + line * 64);
    }
  }

  // The block holding element pos, cut at `end` where the kernel's rows
  // allow: its first element and length.
  std::pair<std::int64_t, std::int64_t> block_at(std::int64_t pos, std::int64_t end) const {
    const std::int64_t row = m_.row;
    if (row == 0) return {pos, std::min(block, end - pos)};
    if (row > block) return {pos, std::min({block, end - pos, row - pos % row})};
    const std::int64_t first = pos - pos % row, rows = (end - first + row - 1) / row;
    return {first, std::min(block / row, rows) * row};
  }

  // Elements [begin, end).
  void run(std::int64_t begin, std::int64_t end) const {
    if (begin >= end) return;
    for (auto here = block_at(begin, end);;) {
      const std::int64_t next = here.first + here.second;
      const auto after = next < end ? block_at(next, end) : std::pair<std::int64_t, std::int64_t>{next, 0};
      compute(here.first, here.second, after.first, after.second);
      if (after.second == 0) return;
      here = after;
    }
  }

  // Elements [begin, end), within one result's row and one segment of it,
  // computed and folded into the reductions.
  void fold(std::int64_t begin, std::int64_t end, Folder* folders) const {
    for (std::int64_t pos = begin; pos < end;) {
      const auto [first, n] = block_at(pos, end);
      compute(first, n);
      const std::int64_t stop = std::min(first + n, end);
      for (std::size_t r = 0; r < m_.reductions.size(); ++r) {
        const FusedKernel::Reduction& reduction = m_.reductions[r];
        const std::size_t size = m_.places[std::size_t(reduction.slot)].size;
        folders[r].add(reduction.pieces, stop - pos, ptr(reduction.slot, first) + std::size_t(pos - first) * size, size);
      }
      pos = stop;
    }
  }

 private:
  const FusedKernel& m_;
  const Place* places_;
  char* const* bases_;
  char* const* scattered_;
  unsigned char* temps_;
  native::BlockLoop loop_;
};

// Where each reduction's results go, and their size.
struct Results {
  char* at[FusedKernel::max_reductions];
  std::size_t size[FusedKernel::max_reductions];
};

// One result's row [begin, begin + row): in the eager reduction's segments
// (on oneTBB when `parallel`), each folded block by block, then the
// segments' results as eager reduces them; result r written at
// results.at[r] + index * size.
void reduce_row(const FusedKernel& m, const Bases& bases, std::int64_t begin, std::int64_t row, std::int64_t index,
                const Results& results, bool parallel) {
  const std::size_t count = m.reductions.size();
  const std::int64_t segments = std::max<std::int64_t>(1, (row + nx::ops::reduce_segment - 1) / nx::ops::reduce_segment);
  boost::container::small_vector<Partial, FusedKernel::max_reductions> partial(std::size_t(segments) * count);
  auto segment = [&](std::int64_t s) {
    Folder folders[FusedKernel::max_reductions];
    for (std::size_t r = 0; r < count; ++r) folders[r].start(m.reductions[r].pieces);
    const std::int64_t from = begin + s * nx::ops::reduce_segment;
    Blocks(m, bases).fold(from, std::min(begin + row, from + nx::ops::reduce_segment), folders);
    for (std::size_t r = 0; r < count; ++r)
      folders[r].finish(m.reductions[r].pieces, partial[std::size_t(s) * count + r].bytes, segments > 1);
  };
  if (parallel && segments > 1)
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, segments, 1),
        [&](const tbb::blocked_range<std::int64_t>& range) {
          for (std::int64_t s = range.begin(); s < range.end(); ++s) segment(s);
        },
        tbb::simple_partitioner());
  else
    for (std::int64_t s = 0; s < segments; ++s) segment(s);
  for (std::size_t r = 0; r < count; ++r) {
    char* out = results.at[r] + std::size_t(index) * results.size[r];
    if (segments == 1) {
      std::memcpy(out, partial[r].bytes, results.size[r]);
      continue;
    }
    const nx::ops::Prim prim = m.reductions[r].prim;
    const nx::DType dtype = m.slots[std::size_t(m.reductions[r].slot)].dtype;
    const std::size_t size = nx::size_of(nx::ops::accumulator_dtype(prim, dtype));
    boost::container::small_vector<unsigned char, 256> firsts(std::size_t(segments) * size);
    for (std::int64_t s = 0; s < segments; ++s)
      std::memcpy(firsts.data() + std::size_t(s) * size, partial[std::size_t(s) * count + r].bytes, size);
    nx::ops::combine_segments(prim, dtype, dtype, segments, reinterpret_cast<const char*>(firsts.data()), out);
  }
}

// Results [first, last) whose rows fit a block, several to a block: each
// computed once, then each row reduced in one piece.
void reduce_short_rows(const FusedKernel& m, const Blocks& blocks, std::int64_t first, std::int64_t last,
                       const Results& results) {
  const std::int64_t row = m.reduced, per_block = block / row;
  for (std::int64_t r0 = first; r0 < last; r0 += per_block) {
    const std::int64_t k = std::min(per_block, last - r0), begin = r0 * row;
    blocks.compute(begin, k * row);
    for (std::size_t r = 0; r < m.reductions.size(); ++r) {
      const FusedKernel::Reduction& reduction = m.reductions[r];
      const char* in = blocks.ptr(reduction.slot, begin);
      const std::size_t in_row = std::size_t(row) * results.size[r];
      if (reduction.short_rows) {  // (rows of a few elements: one loop, no accumulators' round trip)
        reduction.short_rows(k, row, in, results.at[r] + std::size_t(r0) * results.size[r]);
        continue;
      }
      for (std::int64_t j = 0; j < k; ++j) {
        ReduceState state;
        reduction.pieces.start(state.bytes);
        reduction.pieces.add(row, in + std::size_t(j) * in_row, state.bytes);
        reduction.pieces.finish(state.bytes, results.at[r] + std::size_t(r0 + j) * results.size[r]);
      }
    }
  }
}

// The kernel with its reductions: each result reduces a row of m.reduced
// elements (all of them for a 0-d result), in the eager reduction's order.
// Several results run rows on oneTBB; one runs its segments, unless blocks
// of whole rows of the kernel would cross them (then it runs on one
// thread: the same bits).
void run_reducing(const FusedKernel& m, const Bases& bases, const Results& results) {
  const std::int64_t rows = nx::numel(m.reductions[0].shape), row = m.reduced;
  const bool parallel = m.size >= nx::ops::parallel_grain;
  if (rows == 1) {
    const bool aligned = m.row == 0 || m.row > block || nx::ops::reduce_segment % m.row == 0;
    return reduce_row(m, bases, 0, row, 0, results, parallel && aligned);
  }
  auto some_rows = [&](std::int64_t first, std::int64_t last) {
    if (row > 0 && row <= block) return reduce_short_rows(m, Blocks(m, bases), first, last, results);
    for (std::int64_t r = first; r < last; ++r) reduce_row(m, bases, r * row, row, r, results, false);
  };
  if (!parallel) return some_rows(0, rows);
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, rows, std::max<std::int64_t>(1, nx::ops::chunk_elements / row)),
      [&](const tbb::blocked_range<std::int64_t>& range) { some_rows(range.begin(), range.end()); },
      tbb::simple_partitioner());
}

// C-order copies of a run's strided inputs.
using Held = boost::container::small_vector<nx::Tensor, 4>;

// Slot k's base address in this run: a written result's buffer is found
// now (vm::buffer_for), a rows operand repeated over a block at `repeated`;
// a temporary has none (its place is in the block buffers).
[[gnu::always_inline]] inline char* slot_base(const FusedKernel& m, std::size_t k, Frame& f, Held& held,
                                              char* repeated) {
  using Source = FusedKernel::Source;
  auto in_order = [&](const nx::Tensor& t) {
    if (nx::ops::is_contiguous(*t.impl())) return nx::ops::base_address(*t.impl());
    held.push_back(nx::ops::contiguous(t));
    return nx::ops::base_address(*held.back().impl());
  };
  const FusedKernel::Slot& slot = m.slots[k];
  const FusedKernel::Place& place = m.places[k];
  switch (slot.source) {
    case Source::tensor:
    case Source::columns:
    case Source::broadcast:
    case Source::indexed:
    case Source::whole: return in_order(f.tensors[std::size_t(slot.reg)]);
    case Source::view: return in_order(f.tensors[std::size_t(slot.reg)]) + slot.offset * std::int64_t(place.size);
    case Source::element: return nx::ops::base_address(*f.tensors[std::size_t(slot.reg)].impl());
    case Source::scalar: return reinterpret_cast<char*>(f.scalars[std::size_t(slot.reg)].bytes);
    case Source::rows: {
      char* base = in_order(f.tensors[std::size_t(slot.reg)]);
      if (place.kind != Place::Kind::repeated || !repeated) return base;  // (machine code reads the row itself)
      // (the row copied over a block: once, then what is there doubled)
      char* const to = repeated + place.offset;
      const std::size_t bytes = std::size_t(std::min(block, m.size) / m.row * m.row) * place.size;
      std::size_t done = std::min(bytes, std::size_t(m.row) * place.size);
      std::memcpy(to, base, done);
      for (; done < bytes; done *= 2) std::memcpy(to + done, to, std::min(done, bytes - done));
      return to;
    }
    case Source::computed:
      if (slot.reg < 0) return nullptr;
      nx::Tensor& out = f.tensors[std::size_t(slot.reg)];
      out = buffer_for(m, slot, f);  // (a donor's: its place above reads the same buffer)
      return nx::ops::base_address(*out.impl());
  }
  return nullptr;
}

// Each scatter's result, a copy of its operand (the rows are added to it),
// its base address appended to `bases`.
template <class Addresses> void scatter_results(const FusedKernel& m, Frame& f, Addresses& bases) {
  for (const FusedKernel::Scattered& s : m.scatters) {
    nx::Tensor& out = f.tensors[std::size_t(s.out)];
    out = nx::ops::make_tensor(m.slots[std::size_t(s.slot)].dtype, s.shape);
    nx::ops::copy_elements(*f.tensors[std::size_t(m.slots[std::size_t(s.operand)].reg)].impl(), *out.impl());
    bases.push_back(nx::ops::base_address(*out.impl()));
  }
}

// A kernel promoted to machine code: its loop over the kernel's rows (its
// elements when it is not in rows), on oneTBB in chunks when it is large
// and scatters nothing.
void run_native(const FusedKernel& m, Frame& f, native::FusedLoop loop) {
  Held held;
  const std::size_t slots = m.slots.size();
  Bases bases(slots, boost::container::default_init);
  for (std::size_t k = 0; k < slots; ++k) bases[k] = slot_base(m, k, f, held, nullptr);
  scatter_results(m, f, bases);
  const std::int64_t row = std::max<std::int64_t>(1, m.row), rows = m.size / row;
  if (!m.scatters.empty() || m.size < nx::ops::parallel_grain) return loop(bases.data(), 0, rows);
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, rows, std::max<std::int64_t>(1, nx::ops::chunk_elements / row)),
      [&](const tbb::blocked_range<std::int64_t>& r) { loop(bases.data(), r.begin(), r.end()); },
      tbb::simple_partitioner());
}

// A kernel of one block (FusedKernel::single_block): its steps run straight on
// its slots' base addresses, the temporaries' on the stack (by `loop` when
// it is promoted).
void run_one_block(const FusedKernel& m, Frame& f, native::BlockLoop loop) {
  Held held;
  alignas(align) unsigned char on_stack[8192];  // (a few temporaries' blocks need no thread buffer)
  unsigned char* const temps = m.block_bytes <= sizeof on_stack ? on_stack : block_buffers(m.block_bytes);
  const std::size_t slots = m.slots.size();
  char* at[FusedKernel::one_block_slots];
  for (std::size_t k = 0; k < slots; ++k)
    at[k] = m.places[k].kind == Place::Kind::temporary ? reinterpret_cast<char*>(temps + m.places[k].offset)
                                                       : slot_base(m, k, f, held, nullptr);
  if (loop) return loop(at, m.size);
  for (const FusedKernel::Step& s : m.steps) run_step(s, m.places.data(), at, m.size, m.row);
}

// Any other kernel: its blocks, on oneTBB when it is large (by `loop` when
// it is promoted).
void run_blocks(const FusedKernel& m, Frame& f, native::BlockLoop loop) {
  Held held;
  const std::size_t slots = m.slots.size();
  Bases bases(slots, boost::container::default_init);
  char* const repeated = m.rows_bytes > 0 ? rows_buffer(m.rows_bytes) : nullptr;
  for (std::size_t k = 0; k < slots; ++k) bases[k] = slot_base(m, k, f, held, repeated);
  if (!m.reductions.empty()) {
    Results results;
    for (std::size_t r = 0; r < m.reductions.size(); ++r) {
      const FusedKernel::Reduction& reduction = m.reductions[r];
      const nx::DType dtype = m.slots[std::size_t(reduction.slot)].dtype;
      results.size[r] = nx::size_of(dtype);
      if (reduction.out.scalar) {
        results.at[r] = reinterpret_cast<char*>(f.scalars[std::size_t(reduction.out.index)].bytes);
      } else {
        nx::Tensor& out = f.tensors[std::size_t(reduction.out.index)];
        out = nx::ops::make_tensor(dtype, reduction.shape);
        results.at[r] = nx::ops::base_address(*out.impl());
      }
    }
    return run_reducing(m, bases, results);
  }
  if (!m.scatters.empty()) {  // (on one thread: eager's order of the adds)
    boost::container::small_vector<char*, FusedKernel::max_scatters> scattered;
    scatter_results(m, f, scattered);
    return Blocks(m, bases, scattered.data()).run(0, m.size);
  }
  if (m.size < nx::ops::parallel_grain) return Blocks(m, bases, nullptr, loop).run(0, m.size);
  // (chunks of whole rows when the kernel is in rows)
  const std::int64_t grain = m.row == 0 ? nx::ops::chunk_elements
                                        : std::max<std::int64_t>(1, nx::ops::chunk_elements / m.row) * m.row;
  const std::int64_t chunks = (m.size + grain - 1) / grain;
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, chunks, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        Blocks(m, bases, nullptr, loop).run(r.begin() * grain, std::min(m.size, r.end() * grain));
      },
      tbb::simple_partitioner());
}

}  // namespace

void run_fused(const FusedKernel& m, Frame& f) {
  const void* loop = m.native->loop(m.size, native::emit_fused, &m, "a fused kernel", "elements");
  if (loop && m.row > 0) return run_native(m, f, native::as_loop<native::FusedLoop>(loop));
  const auto block_loop = native::as_loop<native::BlockLoop>(loop);  // (null: on the VM)
  return m.single_block ? run_one_block(m, f, block_loop) : run_blocks(m, f, block_loop);
}

}  // namespace rune::vm
