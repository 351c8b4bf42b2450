// Map kernels: a fused elementwise computation run over blocks of its
// outputs. Each step is the eager kernels' row loop for its primitive, run
// on a block at a time (1,024 elements, in the caches), so an element's
// bits are eager's whatever the fusion, the block or the thread. Blocks
// run on oneTBB above the eager kernels' grain, in chunks fixed by the
// size alone.
//
// A kernel's reductions fold each block of the values they reduce as soon
// as it is computed, in the eager reduction's segments (one state per
// segment), and combine the segments' results as eager does: the same bits,
// one pass.
#include <algorithm>
#include <cstdint>
#include <cstring>

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

constexpr std::int64_t block = 1024;
constexpr std::size_t align = 64;
static_assert(block % nx::ops::kernels::reduce_piece == 0 && nx::ops::reduce_segment % block == 0,
              "a reduction's pieces are whole blocks, its segments too");

// Where a slot's elements are: a base address and a stride of 0
// (broadcast) or 1, or an offset in a block buffer (temporaries).
struct Place {
  char* base;
  std::int64_t stride;
  std::int64_t temp;  // the offset in the block buffer, -1 for the others
  std::size_t size;   // of an element
};
// (a kernel of up to 32 slots places them without allocating)
struct Places {
  boost::container::small_vector<Place, 32> slots;
  std::size_t temp_bytes = 0;
};

// The running state of one reduction.
struct alignas(64) ReduceState {
  unsigned char bytes[nx::ops::kernels::reduce_state_bytes];
};

// Blocks [first, last), each folded into the reductions' states after its
// steps.
void run_blocks(const MapKernel& m, const Places& at, std::int64_t first, std::int64_t last,
                ReduceState* states = nullptr) {
  thread_local std::vector<unsigned char> buffer;
  if (buffer.size() < at.temp_bytes + align) buffer.resize(at.temp_bytes + align);
  unsigned char* temps = buffer.data() + (align - reinterpret_cast<std::uintptr_t>(buffer.data()) % align) % align;
  for (std::int64_t b = first; b < last; ++b) {
    const std::int64_t begin = b * block, n = std::min(block, m.size - begin);
    auto ptr = [&](std::int32_t k) -> void* {
      const Place& p = at.slots[std::size_t(k)];
      if (p.temp >= 0) return temps + p.temp;
      return p.base + begin * p.stride * std::int64_t(p.size);
    };
    auto stride = [&](std::int32_t k) {
      const Place& p = at.slots[std::size_t(k)];
      return p.temp >= 0 ? 1 : p.stride;
    };
    for (const MapKernel::Step& s : m.steps) {
      switch (s.family) {
        case nx::ops::Family::binary:
          s.row.binary(n, ptr(s.in[0]), stride(s.in[0]), ptr(s.in[1]), stride(s.in[1]), ptr(s.out));
          break;
        case nx::ops::Family::select:
          s.row.select(n, ptr(s.in[0]), stride(s.in[0]), ptr(s.in[1]), stride(s.in[1]), ptr(s.in[2]),
                       stride(s.in[2]), ptr(s.out));
          break;
        default: s.row.unary(n, ptr(s.in[0]), stride(s.in[0]), ptr(s.out)); break;
      }
    }
    for (std::size_t r = 0; r < m.reductions.size(); ++r)
      m.reductions[r].pieces.add(n, ptr(m.reductions[r].slot), states[r].bytes);
  }
}

// A reduction's result (of up to 16 bytes: complex128).
struct Partial {
  alignas(16) unsigned char bytes[16];
};

// The kernel run segment by segment, each segment's reductions finished
// into partial results, which are then reduced as the eager rule does.
void run_reducing(const MapKernel& m, const Places& at, Frame& f) {
  const std::int64_t blocks = (m.size + block - 1) / block, per = nx::ops::reduce_segment / block;
  const std::int64_t segments = std::max<std::int64_t>(1, (blocks + per - 1) / per);
  const std::size_t count = m.reductions.size();
  boost::container::small_vector<Partial, MapKernel::max_reductions> partial(std::size_t(segments) * count);
  auto segment = [&](std::int64_t s) {
    ReduceState states[MapKernel::max_reductions];
    for (std::size_t r = 0; r < count; ++r) m.reductions[r].pieces.start(states[r].bytes);
    run_blocks(m, at, s * per, std::min(blocks, (s + 1) * per), states);
    for (std::size_t r = 0; r < count; ++r)
      m.reductions[r].pieces.finish(states[r].bytes, partial[std::size_t(s) * count + r].bytes);
  };
  if (m.size >= nx::ops::parallel_grain)
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(0, segments, 1),
        [&](const tbb::blocked_range<std::int64_t>& r) {
          for (std::int64_t s = r.begin(); s < r.end(); ++s) segment(s);
        },
        tbb::simple_partitioner());
  else
    for (std::int64_t s = 0; s < segments; ++s) segment(s);
  for (std::size_t r = 0; r < count; ++r) {
    const MapKernel::Reduction& reduction = m.reductions[r];
    const nx::DType dtype = m.slots[std::size_t(reduction.slot)].dtype;
    const std::size_t size = nx::size_of(dtype);
    Partial result = partial[r];
    if (segments > 1) {
      boost::container::small_vector<unsigned char, 256> row(std::size_t(segments) * size);
      for (std::int64_t s = 0; s < segments; ++s)
        std::memcpy(row.data() + std::size_t(s) * size, partial[std::size_t(s) * count + r].bytes, size);
      nx::ops::reduce_row(reduction.prim, dtype, dtype, segments,
                          reinterpret_cast<const char*>(row.data()), reinterpret_cast<char*>(result.bytes));
    }
    if (reduction.out.scalar) {
      std::memcpy(f.scalars[std::size_t(reduction.out.index)].bytes, result.bytes, size);
    } else {
      nx::Tensor& out = f.tensors[std::size_t(reduction.out.index)];
      out = nx::ops::make_tensor(dtype, {});
      std::memcpy(nx::ops::base_address(*out.impl()), result.bytes, size);
    }
  }
}

}  // namespace

void run_map(const MapKernel& m, Frame& f) {
  using Source = MapKernel::Source;
  boost::container::small_vector<nx::Tensor, 4> held;  // C-order copies of strided inputs
  Places at;
  for (const MapKernel::Slot& slot : m.slots) {
    char* base = nullptr;
    std::int64_t stride = 1, temp = -1;
    switch (slot.source) {
      case Source::tensor: {
        const nx::Tensor& t = f.tensors[std::size_t(slot.reg)];
        const bool in_order = nx::ops::is_contiguous(*t.impl());
        if (!in_order) held.push_back(nx::ops::contiguous(t));
        base = nx::ops::base_address(in_order ? *t.impl() : *held.back().impl());
        break;
      }
      case Source::element:
        base = nx::ops::base_address(*f.tensors[std::size_t(slot.reg)].impl());
        stride = 0;
        break;
      case Source::scalar:
        base = reinterpret_cast<char*>(f.scalars[std::size_t(slot.reg)].bytes);
        stride = 0;
        break;
      case Source::computed:
        if (slot.reg >= 0) {
          nx::Tensor& out = f.tensors[std::size_t(slot.reg)];
          nx::Tensor* donor = slot.donor >= 0 ? &f.tensors[std::size_t(m.slots[std::size_t(slot.donor)].reg)] : nullptr;
          if (donor && reusable(*donor)) out = std::move(*donor);  // (its place above reads the same buffer)
          else out = nx::ops::make_tensor(slot.dtype, m.shape);
          base = nx::ops::base_address(*out.impl());
        } else {
          temp = std::int64_t(at.temp_bytes);
          at.temp_bytes += (std::size_t(block) * nx::size_of(slot.dtype) + align - 1) / align * align;
        }
        break;
    }
    at.slots.push_back({base, stride, temp, nx::size_of(slot.dtype)});
  }
  if (!m.reductions.empty()) return run_reducing(m, at, f);
  const std::int64_t blocks = (m.size + block - 1) / block;
  if (m.size < nx::ops::parallel_grain) return run_blocks(m, at, 0, blocks);
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, blocks, nx::ops::chunk_elements / block),
      [&](const tbb::blocked_range<std::int64_t>& r) { run_blocks(m, at, r.begin(), r.end()); },
      tbb::simple_partitioner());
}

}  // namespace rune::vm
