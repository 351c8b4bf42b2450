#include "executors.hpp"

#include <rune/jit.hpp>

namespace gen {

namespace {

using nx::Tensor;

std::vector<Tensor> run_program(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::run(traced, args);
}

// A program loaded from its text runs as the traced one does.
std::vector<Tensor> run_text(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::run(rune::parse_program(rune::to_string(traced)), args);
}

std::vector<Tensor> run_jit(const Function& f, const rune::Program&, const std::vector<Tensor>& args) {
  return rune::jit(f)(args);
}

const Executor list[] = {
    {"rune::run", run_program},
    {"rune::run of the parsed text", run_text},
    {"rune::jit", run_jit},
};

}  // namespace

std::span<const Executor> executors() { return list; }

}  // namespace gen
