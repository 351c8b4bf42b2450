// Jobs that go wrong, run by tests/ranks/expect_job.py under mpiexec -n 2
// (meson's ranks suite), which checks how each ends:
//   throw    rank 1 throws and does not catch: the job stops with its message
//   diverge  rank 0 calls all_gather where rank 1 calls psum (RUNE_RANKS_CHECK=1):
//            both throw, naming both
//   shape    the same collective on operands of different shapes
//   finish   rank 1 ends while rank 0 calls psum: rank 0 throws, rank 1 stops the job
#include <iostream>
#include <stdexcept>
#include <string_view>

#include <rune/rune.hpp>

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  const bool first = nx::item(rune::lane_index(rune::ranks())) == 0;
  const nx::Tensor x = nx::ones(nx::float64, {first || mode != "shape" ? 2 : 3});
  if (mode == "throw" && !first) throw std::invalid_argument("rank 1 gave up");
  if (mode == "finish" && !first) return 0;
  try {
    if (mode == "diverge" && first) rune::all_gather(rune::ranks(), x);
    else rune::psum(rune::ranks(), x);
  } catch (const std::invalid_argument& e) {
    std::cout << e.what() << std::endl;
  }
}
