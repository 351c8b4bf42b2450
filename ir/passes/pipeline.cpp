#include "ir/passes/pipeline.hpp"

#include <cstdlib>
#include <iostream>

#include "ir/passes/cse.hpp"
#include "ir/passes/dce.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"

namespace rune::ir {

namespace {
Program stage(const char* name, Program (*pass)(const Program&), const Program& in) {
  Program out = pass(in);
#ifndef NDEBUG
  verify(out);
#endif
  static const bool log = [] {
    const char* v = std::getenv("RUNE_LOG_PASSES");
    return v && std::atoi(v) != 0;
  }();
  if (log) std::cerr << "rune: after " << name << ":\n" << print(out);
  return out;
}
}  // namespace

Program simplify(const Program& program) {
  Program p = stage("cse", eliminate_common_subexpressions, program);
  return stage("dce", eliminate_dead_code, p);
}

}  // namespace rune::ir
