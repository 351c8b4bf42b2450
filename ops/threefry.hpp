// Threefry-2x32 with 20 rounds, the counter-based generator of
// nx::random: a keyed bijection of 64-bit blocks, built from additions,
// rotations and xors of 32-bit words (Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11; it is Threefish,
// the block cipher of the Skein hash, cut down to two words). The i-th
// random block of a key is the function applied to the counter i, so any
// element of a stream is computed alone: no state, the same bits in any
// order, on any thread.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace nx::ops {

using Words2x32 = std::array<std::uint32_t, 2>;

constexpr Words2x32 threefry2x32(const Words2x32& key, const Words2x32& counter) {
  // Skein's rotation distances for two 32-bit words, used in turn.
  constexpr int rotation[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  // The key schedule: the key and a third word, their xor with Skein's
  // parity constant, so that no key makes the schedule degenerate.
  const std::uint32_t schedule[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  std::uint32_t x0 = counter[0] + schedule[0], x1 = counter[1] + schedule[1];
  for (int round = 0; round < 20; ++round) {
    x0 += x1;
    x1 = std::rotl(x1, rotation[round % 8]) ^ x0;
    if (round % 4 == 3) {  // after every fourth round, the next key injection
      const std::uint32_t s = std::uint32_t(round / 4 + 1);
      x0 += schedule[s % 3];
      x1 += schedule[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

}  // namespace nx::ops
