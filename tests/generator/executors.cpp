#include "executors.hpp"

#include <rune/jit.hpp>
#include <rune/nx.hpp>

#include "ir/eval.hpp"
#include "ops/concrete.hpp"

namespace gen {

namespace {

using nx::Tensor;

std::vector<Tensor> run_program(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::run(traced, args);
}

// The oracle of the VM (rune::run and rune::jit run on the VM).
std::vector<Tensor> run_reference(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::ir::evaluate(traced.ir(), args);
}

// A program loaded from its text runs as the traced one does.
std::vector<Tensor> run_text(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::run(rune::parse_program(rune::to_string(traced)), args);
}

// The second call runs the cached executable.
std::vector<Tensor> run_jit(const Function& f, const rune::Program&, const std::vector<Tensor>& args) {
  auto compiled = rune::jit(f);
  compiled(args);
  return compiled(args);
}

// The same elements in another layout: every other element of a buffer
// holding each one twice (a view with doubled strides, off its start).
Tensor strided(const Tensor& x) {
  const Tensor column = nx::expand_dims(x, {-1});
  const Tensor twice = nx::concatenate({column, column}, -1);
  nx::ops::Strides strides = nx::ops::contiguous_strides(x.shape());
  for (auto& s : strides) s *= 2;
  return nx::ops::make_view(twice, x.shape(), strides, 1);
}

std::vector<Tensor> strided(const std::vector<Tensor>& args) {
  std::vector<Tensor> out;
  for (const Tensor& x : args) out.push_back(strided(x));
  return out;
}

std::vector<Tensor> run_strided(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::run(traced, strided(args));
}

std::vector<Tensor> run_jit_strided(const Function& f, const rune::Program&, const std::vector<Tensor>& args) {
  return rune::jit(f)(strided(args));
}

// Fresh copies given up to the compiled call: results that view them must
// be copied out before their storage is taken.
std::vector<Tensor> run_jit_donated(const Function& f, const rune::Program&, const std::vector<Tensor>& args) {
  std::vector<Tensor> donated;
  for (const Tensor& x : args) {
    Tensor copy = nx::ops::make_tensor(x.dtype(), x.shape());
    nx::ops::copy_elements(*x.impl(), *copy.impl());
    donated.push_back(nx::donate(copy));
  }
  return rune::jit(f)(donated);
}

// The program evaluated under a staging trace is recorded again, then run.
std::vector<Tensor> run_restaged(const Function&, const rune::Program& traced, const std::vector<Tensor>& args) {
  return rune::jit([&traced](const std::vector<Tensor>& a) { return rune::run(traced, a); })(args);
}

const Executor list[] = {
    {"rune::run", run_program},
    {"the reference interpreter", run_reference},
    {"rune::run of the parsed text", run_text, true},
    {"rune::jit", run_jit},
    {"rune::run on strided views of the arguments", run_strided},
    {"rune::jit on strided views of the arguments", run_jit_strided},
    {"rune::jit on donated arguments", run_jit_donated},
    {"rune::run staged again by rune::jit", run_restaged},
};

}  // namespace

std::span<const Executor> executors() { return list; }

}  // namespace gen
