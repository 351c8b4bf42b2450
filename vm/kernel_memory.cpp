// The memory of one fused kernel, planned once: the block buffers its
// temporaries share, which results it streams past the caches, and which
// operands it asks of the caches a block ahead (vm/fused_kernel.cpp runs it).
#include "vm/kernel_memory.hpp"

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include "ops/kernels/kernels.hpp"

namespace rune::vm {
namespace {

// Temporaries share block buffers: a buffer is free again once the last
// step reading its value has run (not before: a step never writes over
// its own operands), so a chain keeps a few blocks in the caches rather
// than one per step.
void share_buffers(FusedKernel& m) {
  std::vector<std::size_t> last_read(m.slots.size(), 0);
  for (std::size_t i = 0; i < m.steps.size(); ++i)
    for (std::int32_t k : m.steps[i].inputs()) last_read[std::size_t(k)] = i;
  for (const FusedKernel::Reduction& r : m.reductions) last_read[std::size_t(r.slot)] = m.steps.size();
  for (const FusedKernel::Scattered& s : m.scatters) last_read[std::size_t(s.slot)] = m.steps.size();
  auto temporary = [&](std::int32_t k) {
    const FusedKernel::Slot& slot = m.slots[std::size_t(k)];
    return slot.source == FusedKernel::Source::computed && slot.reg < 0;
  };
  std::unordered_map<std::size_t, std::vector<std::int32_t>> free;  // by element size
  for (std::size_t i = 0; i < m.steps.size(); ++i) {
    const FusedKernel::Step& step = m.steps[i];
    if (temporary(step.out)) {
      FusedKernel::Slot& out = m.slots[std::size_t(step.out)];
      std::vector<std::int32_t>& unused = free[nx::size_of(out.dtype)];
      if (unused.empty()) {
        out.buffer = std::int32_t(m.buffers.size());
        m.buffers.push_back(nx::size_of(out.dtype));
      } else {
        out.buffer = unused.back();
        unused.pop_back();
      }
    }
    for (std::int32_t k : step.inputs())
      if (temporary(k) && last_read[std::size_t(k)] == i && k != step.out) {
        const FusedKernel::Slot& dead = m.slots[std::size_t(k)];
        std::vector<std::int32_t>& unused = free[nx::size_of(dead.dtype)];
        if (std::find(unused.begin(), unused.end(), dead.buffer) == unused.end()) unused.push_back(dead.buffer);
      }
  }
}

std::size_t block_bytes(std::size_t element) { return (std::size_t(FusedKernel::block) * element + 63) / 64 * 64; }

bool read_in_place(const FusedKernel& m, std::int32_t slot) {
  return std::any_of(m.indexed.begin(), m.indexed.end(), [&](const auto& g) { return g.slot == slot && g.in_place; });
}

// Each slot's place but for its base address: the temporaries in their
// block buffers, then the operands spread or gathered per block after
// them, the rows operands repeated over a block of whole rows in the rows
// buffer.
void plan_places(FusedKernel& m) {
  using Kind = FusedKernel::Place::Kind;
  using Source = FusedKernel::Source;
  for (std::size_t size : m.buffers) m.block_bytes += block_bytes(size);
  std::vector<std::size_t> buffer_at;
  for (std::size_t b = 0, at = 0; b < m.buffers.size(); at += block_bytes(m.buffers[b++])) buffer_at.push_back(at);
  const bool rows_in_a_block = m.row > 0 && m.row <= FusedKernel::block;
  for (const FusedKernel::Slot& slot : m.slots) {
    FusedKernel::Place place;
    place.size = nx::size_of(slot.dtype);
    auto in_block_buffers = [&](Kind kind) {
      place.kind = kind;
      place.offset = m.block_bytes;
      m.block_bytes += block_bytes(place.size);
    };
    const std::int32_t k = std::int32_t(m.places.size());
    switch (slot.source) {
      case Source::element:
      case Source::scalar: place.stride = 0; break;
      case Source::columns:
        if (m.row > FusedKernel::block) {
          place.kind = Kind::column;
          place.stride = 0;
        } else {
          in_block_buffers(Kind::columns);
          m.spread.push_back(k);
        }
        break;
      case Source::broadcast: in_block_buffers(Kind::gathered); break;
      case Source::indexed:
        if (!read_in_place(m, k)) in_block_buffers(Kind::gathered);  // (else in memory: where its indices point)
        break;
      case Source::rows:
        if (rows_in_a_block) {
          place.kind = Kind::repeated;
          place.offset = m.rows_bytes;
          m.rows_bytes += block_bytes(place.size);
        } else {
          place.kind = Kind::row;
        }
        break;
      case Source::computed:
        if (slot.reg < 0) {
          place.kind = Kind::temporary;
          place.offset = buffer_at[std::size_t(slot.buffer)];
        }
        break;
      default: break;  // (tensor, view, whole: in memory)
    }
    if (slot.shape >= 0 && place.kind == Kind::memory) place.kind = Kind::per_row;  // (one element per row)
    m.places.push_back(place);
  }
  m.single_block = m.size <= FusedKernel::block && m.reductions.empty() && m.row == 0 && m.spread.empty() &&
                   m.gathered.empty() && m.indexed.empty() && m.scatters.empty() && m.rows_bytes == 0 &&
                   m.slots.size() <= FusedKernel::one_block_slots;
}

// A kernel writing more than streaming_threshold() bytes writes the results
// no later step or reduction reads with the eager kernels' streaming loops:
// stores past the caches, the same bits. Returns which slots it streams.
std::vector<bool> stream_results(FusedKernel& m) {
  const auto& K = nx::ops::kernels::table();
  std::vector<bool> streamed(m.slots.size(), false);
  std::size_t written = 0;
  for (const FusedKernel::Slot& s : m.slots)
    if (s.source == FusedKernel::Source::computed && s.reg >= 0) written += std::size_t(m.size) * nx::size_of(s.dtype);
  if (written <= streaming_threshold()) return streamed;
  for (std::size_t i = 0; i < m.steps.size(); ++i) {
    FusedKernel::Step& step = m.steps[i];
    const FusedKernel::Slot& out = m.slots[std::size_t(step.out)];
    if (out.reg < 0 || step.over != FusedKernel::Step::Over::elements) continue;
    bool read = false;
    for (std::size_t j = i + 1; j < m.steps.size(); ++j)
      for (std::int32_t in : m.steps[j].inputs()) read = read || in == step.out;
    for (const FusedKernel::Reduction& r : m.reductions) read = read || r.slot == step.out;
    for (const FusedKernel::Scattered& s : m.scatters) read = read || s.slot == step.out;
    if (read) continue;
    const int d = int(out.dtype);
    if (step.family == nx::ops::Family::unary && K.unary_streaming[int(step.prim)][d]) {
      step.row.unary = K.unary_streaming[int(step.prim)][d];
      streamed[std::size_t(step.out)] = true;
    }
    if (step.family == nx::ops::Family::binary && K.binary_streaming[int(step.prim)][d]) {
      step.row.binary = K.binary_streaming[int(step.prim)][d];
      streamed[std::size_t(step.out)] = true;
    }
  }
  return streamed;
}

// A step's share of the next block's lines to ask for: the transcendental
// functions take most of a block's time, so they ask for most (asked in
// bursts during the quick steps, the requests would wait for each other).
std::size_t fetch_weight(const FusedKernel::Step& s) {
  using nx::ops::Prim;
  switch (s.prim) {
    case Prim::add: case Prim::sub: case Prim::mul: case Prim::div: case Prim::neg: case Prim::abs:
    case Prim::sign: case Prim::maximum: case Prim::minimum: case Prim::floor: case Prim::ceil:
    case Prim::round: case Prim::select: case Prim::convert: case Prim::stop_gradient:
      return 1;
    default: return 8;
  }
}

// Which operands a kernel asks the caches for a block ahead (those in
// memory, in order: vm/fused_kernel.cpp; not the results it streams past
// the caches, whose lines would be read from memory only to be evicted),
// and the lines of a whole block of the widest of them shared out over the
// steps by their weights. None when
// they come to at most fetched_bytes in all: a kernel over so little stays
// in the caches from one call (or a loop's trip) to the next, and asking
// for its lines again costs more than it brings (a cloth's step).
void plan_fetches(FusedKernel& m, const std::vector<bool>& streamed) {
  std::size_t widest = 0, total = 0, before = 0, bytes = 0;
  for (std::size_t k = 0; k < m.slots.size(); ++k) {
    const FusedKernel::Slot& s = m.slots[k];
    const bool in_memory = s.source == FusedKernel::Source::tensor || s.source == FusedKernel::Source::view ||
                           (s.source == FusedKernel::Source::computed && s.reg >= 0);
    if (!in_memory || streamed[k]) continue;
    m.fetched.push_back(std::int32_t(k));
    widest = std::max(widest, nx::size_of(s.dtype));
    bytes += std::size_t(m.size) * nx::size_of(s.dtype);
  }
  if (bytes <= fetched_bytes) {
    m.fetched.clear();
    return;
  }
  const std::size_t lines = std::size_t(FusedKernel::block) * widest / 64;
  for (const FusedKernel::Step& s : m.steps) total += fetch_weight(s);
  for (const FusedKernel::Step& s : m.steps) {
    const std::size_t after = before + fetch_weight(s);
    m.fetch_lines.push_back({std::uint32_t(lines * before / total), std::uint32_t(lines * after / total)});
    before = after;
  }
}

// The bytes of the last-level cache of the first core, as Linux reports it
// (sysfs), else as the C library does: on the AMD EPYC of bench/RESULTS.md
// glibc says 320 MiB (from the processor's identification: the package's
// complexes together, it seems) where Linux says 32 MiB, one complex's,
// which is all a core's data can fill.
std::size_t last_level_cache() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
  std::size_t kib = 0;
  char unit = 0;
  if (in >> kib >> unit && unit == 'K') return kib << 10;
  const long bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return bytes > 0 ? std::size_t(bytes) : 0;
}

}  // namespace

std::size_t streaming_threshold() {
  static const std::size_t bytes = std::max(nx::ops::kernels::streaming_bytes, last_level_cache() / 2);
  return bytes;
}

void plan_kernel_memory(FusedKernel& m) {
  share_buffers(m);
  plan_places(m);
  m.streamed = stream_results(m);
  plan_fetches(m, m.streamed);
}

}  // namespace rune::vm
