// Build time: trace the chain's step for its state's size and save it.
//   bake STEP_FILE [MASSES]
#include <cstdio>
#include <cstdlib>

#include "chain.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bake STEP_FILE [MASSES]\n");
    return 2;
  }
  const std::int64_t masses = argc > 2 ? std::atoll(argv[2]) : 32;
  const chain::State like{nx::zeros(nx::float64, {masses}), nx::zeros(nx::float64, {masses})};
  rune::save_program(rune::jit(chain::step).program(like, nx::scalar(nx::float64, chain::frame_dt)), argv[1]);
}
