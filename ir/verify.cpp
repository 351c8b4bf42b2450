#include "ir/verify.hpp"

#include <cstdlib>
#include <stdexcept>

#include "ir/text.hpp"
#include "ir/trace.hpp"
#include "ops/errors.hpp"

namespace rune::ir {

bool verifying() {
#ifdef NDEBUG
  static const bool on = [] {
    const char* v = std::getenv("RUNE_VERIFY");
    return v && std::atoi(v) != 0;
  }();
  return on;
#else
  return true;
#endif
}

namespace {

struct Checker {
  const Program& p;
  std::vector<bool> defined;

  [[noreturn]] void bad(std::size_t eq, const std::string& why) const {
    std::string where = eq == std::size_t(-1) ? "the program" : "equation " + std::to_string(eq);
    nx::ops::internal_error("ill-formed program", where + ": " + why + "\n" + print(p));
  }
  void define(int v, std::size_t eq) {
    if (v < 0 || std::size_t(v) >= p.types.size()) bad(eq, "value " + std::to_string(v) + " has no type");
    if (defined[std::size_t(v)]) bad(eq, "value " + std::to_string(v) + " is defined twice");
    defined[std::size_t(v)] = true;
  }
  void use(int v, std::size_t eq) const {
    if (v < 0 || std::size_t(v) >= p.types.size() || !defined[std::size_t(v)])
      bad(eq, "value " + std::to_string(v) + " is used before it is defined");
  }

  std::vector<TensorType> result_types(const Equation& eq) const {
    std::vector<TensorType> in;
    for (int v : eq.inputs) in.push_back(p.types[std::size_t(v)]);
    switch (eq.kind) {
      case OpKind::constant: return {nx::ops::type_of(eq.constant)};
      case OpKind::primitive: {
        std::vector<nx::Tensor> operands;
        for (const TensorType& t : in) operands.push_back(type_only(t));
        return {nx::ops::rules(eq.prim).type(eq.prim, operands, eq.params)};
      }
      default:
        for (const auto& sub : eq.programs) verify(*sub);
        return construct_output_types(eq, in);
    }
  }

  void run() {
    defined.assign(p.types.size(), false);
    for (int v : p.params) define(v, std::size_t(-1));
    for (std::size_t i = 0; i < p.equations.size(); ++i) {
      const Equation& eq = p.equations[i];
      for (int v : eq.inputs) use(v, i);
      std::vector<TensorType> want;
      try {
        want = result_types(eq);
      } catch (const std::invalid_argument& e) {
        bad(i, e.what());
      }
      if (want.size() != eq.outputs.size()) bad(i, "the number of outputs is wrong");
      for (std::size_t k = 0; k < want.size(); ++k) {
        define(eq.outputs[k], i);
        if (p.types[std::size_t(eq.outputs[k])] != want[k])
          bad(i, "output " + std::to_string(k) + " is declared " + nx::ops::to_string(p.types[std::size_t(eq.outputs[k])]) +
                     " but computes " + nx::ops::to_string(want[k]));
      }
    }
    for (int v : p.results) use(v, std::size_t(-1));
  }
};

}  // namespace

void verify(const Program& program) { Checker{program, {}}.run(); }

}  // namespace rune::ir
