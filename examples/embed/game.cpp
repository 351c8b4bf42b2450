// Run time: the game loads the baked step and runs it at a fixed 120 steps
// per second of game time, drawing the chain now and then.
//   game STEP_FILE [MASSES] [SECONDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "host.hpp"

namespace {

// The chain as a row of characters per mass: deeper masses further right.
void draw(std::span<const double> position, double seconds) {
  std::string row;
  for (double y : position) row += char('0' + std::clamp(int(-y * 12.), 0, 9));
  std::printf("t = %4.1f s  %s  lowest %.4f\n", seconds, row.c_str(), *std::min_element(position.begin(), position.end()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: game STEP_FILE [MASSES] [SECONDS]\n");
    return 2;
  }
  const std::size_t masses = argc > 2 ? std::size_t(std::atoll(argv[2])) : 32;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 5.;
  chain::Host host(argv[1], masses);
  const int frames = int(seconds / chain::frame_dt + 0.5);
  const auto start = std::chrono::steady_clock::now();
  for (int frame = 1; frame <= frames; ++frame) {
    host.frame();
    if (frame % 120 == 0) draw(host.position(), frame * chain::frame_dt);
  }
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  std::printf("%d frames, %.2f us per frame (drawing included)\n", frames, took.count() / frames);
}
