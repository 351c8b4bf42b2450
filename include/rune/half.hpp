// 16-bit floating-point element types: IEEE binary16 (float16) and bfloat16.
// They are storage types: arithmetic converts to float, computes, and rounds
// back to nearest-even, which is what NumPy and PyTorch do on the CPU.
#pragma once

#include <bit>
#include <cstdint>

namespace nx {

struct float16_t {
  std::uint16_t bits = 0;

  float16_t() = default;
  explicit float16_t(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static std::uint16_t from_float(float f) {
    std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u)  // inf or nan
      return std::uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u | ((mag >> 13) & 0x3ffu) : 0u));
    if (mag >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // rounds to inf
    if (mag < 0x38800000u) {  // subnormal or zero in half
      // Scale into the subnormal range with float arithmetic, which rounds to nearest-even.
      float scaled = std::bit_cast<float>(mag) * 16777216.0f;  // 2^24
      std::uint32_t q = std::uint32_t(scaled);
      float rem = scaled - float(q);
      if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
      return std::uint16_t(sign | q);
    }
    std::uint32_t rounded = mag - 0x38000000u;  // rebias exponent 127 -> 15
    rounded += 0xfffu + ((rounded >> 13) & 1u);  // round to nearest-even
    return std::uint16_t(sign | (rounded >> 13));
  }
  static float to_float(std::uint16_t h) {
    std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t man = h & 0x3ffu;
    if (exp == 0) {
      float f = float(man) / 16777216.0f;  // man * 2^-24
      return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | sign);
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
  }
};

struct bfloat16_t {
  std::uint16_t bits = 0;

  bfloat16_t() = default;
  explicit bfloat16_t(float f) : bits(from_float(f)) {}
  explicit operator float() const { return std::bit_cast<float>(std::uint32_t(bits) << 16); }

  static std::uint16_t from_float(float f) {
    std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((x >> 16) | 0x40u);  // quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest-even
    return std::uint16_t(x >> 16);
  }
};

}  // namespace nx
