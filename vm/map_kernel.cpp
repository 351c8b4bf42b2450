// Map kernels: a fused elementwise computation run over blocks of its
// outputs. Each step is the eager kernels' row loop for its primitive, run
// on a block at a time (1,024 elements, in the caches), so an element's
// bits are eager's whatever the fusion, the block or the thread. Blocks
// run on oneTBB above the eager kernels' grain, in chunks fixed by the
// size alone.
#include <algorithm>
#include <cstdint>

#include <boost/container/small_vector.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "ops/concrete.hpp"
#include "ops/kernels/iterate.hpp"
#include "vm/machine.hpp"

namespace rune::vm {

namespace {

constexpr std::int64_t block = 1024;
constexpr std::size_t align = 64;

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

void run_blocks(const MapKernel& m, const Places& at, std::int64_t first, std::int64_t last) {
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
          out = nx::ops::make_tensor(slot.dtype, m.shape);
          base = nx::ops::base_address(*out.impl());
        } else {
          temp = std::int64_t(at.temp_bytes);
          at.temp_bytes += (std::size_t(block) * nx::size_of(slot.dtype) + align - 1) / align * align;
        }
        break;
    }
    at.slots.push_back({base, stride, temp, nx::size_of(slot.dtype)});
  }
  const std::int64_t blocks = (m.size + block - 1) / block;
  if (m.size < nx::ops::parallel_grain) return run_blocks(m, at, 0, blocks);
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, blocks, nx::ops::chunk_elements / block),
      [&](const tbb::blocked_range<std::int64_t>& r) { run_blocks(m, at, r.begin(), r.end()); },
      tbb::simple_partitioner());
}

}  // namespace rune::vm
