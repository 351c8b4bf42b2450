// W7 (rune): a game's frame with rune embedded. The embedding example's
// chain of masses on springs (examples/embed/) is baked, loaded with
// rune::load and stepped every frame in place on the game's own arrays
// (Loaded::into over nx::borrow); the same step as a plain C++ loop is the
// baseline, and the difference is rune's cost per frame. [extra] rows: the
// C API's rune_program_run on the same arrays, and a rune::jit call that
// returns new tensors each frame.
//
// Each timed sample runs FRAMES frames; ns/frame = sample time / FRAMES.
#include <rune/rune.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench.hpp"
#include "examples/embed/host.hpp"

using bench::fmtd;

namespace {

constexpr int FRAMES = 1000;

void masses(std::int64_t n) {
  const auto file = std::filesystem::temp_directory_path() / "rune_bench_chain_step.rune";
  const chain::State like{nx::zeros(nx::float64, {n}), nx::zeros(nx::float64, {n})};
  const auto step = rune::jit(chain::step);
  const nx::Tensor dt = nx::scalar(nx::float64, chain::frame_dt);
  rune::save_program(step.program(like, dt), file);

  chain::Host host(file, std::size_t(n));
  std::vector<double> position(std::size_t(n), 0.), velocity(std::size_t(n), 0.);
  for (int i = 0; i < 100; ++i) {
    host.frame();
    chain::step_plain(position.data(), velocity.data(), std::size_t(n), chain::frame_dt);
  }
  const bool same = std::equal(position.begin(), position.end(), host.position().begin());
  std::printf("# W7 rune check: %lld masses, 100 frames of the loaded step equal the plain C++ loop's bits: %s\n",
              static_cast<long long>(n), same ? "ok" : "WRONG");
  if (!same) std::exit(1);

  rune_program* c_step = nullptr;
  if (rune_program_load(file.c_str(), &c_step) != RUNE_OK) {
    std::printf("# W7 rune check: rune_program_load failed: %s\n", rune_last_error());
    std::exit(1);
  }
  std::filesystem::remove(file);
  std::vector<double> c_position(std::size_t(n), 0.), c_velocity(std::size_t(n), 0.);
  double c_dt = chain::frame_dt;
  const void* params[] = {c_position.data(), c_velocity.data(), &c_dt};
  void* const results[] = {c_position.data(), c_velocity.data()};
  chain::State state = like;

  const std::vector<bench::Stats> s = bench::measure_rounds(
      3, 5, 1,
      [&] {
        for (int i = 0; i < FRAMES; ++i) host.frame();
      },
      [&] {
        for (int i = 0; i < FRAMES; ++i) chain::step_plain(position.data(), velocity.data(), std::size_t(n), chain::frame_dt);
        bench::keep(position);
      },
      [&] {
        for (int i = 0; i < FRAMES; ++i) (void)rune_program_run(c_step, params, results);
      },
      [&] {
        for (int i = 0; i < FRAMES; ++i) state = step(state, dt);
        bench::keep(state);
      });
  rune_program_free(c_step);
  const std::string size = "float64[" + std::to_string(n) + "] x 2 state; ";
  auto per_frame = [](const bench::Stats& x) { return fmtd("%.0f ns/frame", x.med / FRAMES * 1e9); };
  const std::string masses_text = std::to_string(n) + " masses";
  bench::report("W7", "rune Loaded::into frame, " + masses_text, s[0], per_frame(s[0]),
                size + "loaded step, in place on the game's arrays (nx::borrow); 1000 frames per sample");
  bench::report("W7", "plain C++ step, " + masses_text, s[1], per_frame(s[1]),
                size + "the same arithmetic in a loop, in place; g++ project flags");
  bench::report("W7", "[extra] rune C API rune_program_run frame, " + masses_text, s[2], per_frame(s[2]),
                size + "the same loaded step through include/rune/rune.h, in place");
  bench::report("W7", "[extra] rune jit call frame, " + masses_text, s[3], per_frame(s[3]),
                size + "rune::jit(step)(state, dt): new result tensors each frame");
}

}  // namespace

int main() {
  masses(32);
  masses(1024);
  return 0;
}
