// The generator's random numbers: SplitMix64 with its own small
// distributions, so a seed gives the same case on every platform (the
// standard library's distributions differ between implementations). For the
// same reason every draw, and every call that adds an operation to a block,
// is a statement of its own or an element of a braced list (which runs left
// to right): compilers order a call's arguments differently. Where a call
// held two, they keep the order GCC on x86-64 gave them (the last argument
// first), so that seeds kept their cases.
#pragma once

#include <cstdint>
#include <vector>

namespace gen {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // An integer in [lo, hi].
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return lo + std::int64_t(next() % std::uint64_t(hi - lo + 1));
  }
  // A real in [lo, hi).
  double real(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * 0x1p-53; }
  bool chance(double p) { return real(0, 1) < p; }
  template <class T> const T& pick(const std::vector<T>& from) {
    return from[std::size_t(uniform(0, std::int64_t(from.size()) - 1))];
  }
  // An index drawn with the given weights.
  std::size_t weighted(const std::vector<int>& weights) {
    int total = 0;
    for (int w : weights) total += w;
    std::int64_t r = uniform(0, total - 1);
    for (std::size_t i = 0;; ++i)
      if ((r -= weights[i]) < 0) return i;
  }

 private:
  std::uint64_t state_;
};

}  // namespace gen
