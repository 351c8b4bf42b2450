// The routes by which a generated function runs besides calling it eagerly;
// each must give eager's bits: rune::run and rune::jit (the VM), the
// reference interpreter (ir::evaluate), and their variations. A later
// executor (machine code) joins the comparison as one more entry of the
// list in executors.cpp.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include <rune/program.hpp>

namespace gen {

using Function = std::function<std::vector<nx::Tensor>(const std::vector<nx::Tensor>&)>;

struct Executor {
  std::string_view name;
  // Runs f on args; `traced` is f traced over args by rune::program.
  std::vector<nx::Tensor> (*run)(const Function& f, const rune::Program& traced, const std::vector<nx::Tensor>& args);
  bool reads_text = false;  // it runs the program's text: not for programs holding C++ code
};

std::span<const Executor> executors();

}  // namespace gen
