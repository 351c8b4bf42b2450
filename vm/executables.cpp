#include "vm/executables.hpp"

#include <algorithm>
#include <list>
#include <mutex>

#include "ir/passes/pipeline.hpp"
#include "ops/nan_hunt.hpp"
#include "vm/compile.hpp"

namespace rune::vm {

std::shared_ptr<const Code> build(std::shared_ptr<const ir::Program> program, const Build& how) {
  std::shared_ptr<const Code> code;
  if (how.passes) {
    // (a NaN hunt keeps small tensors whole: its errors name their elements)
    const std::int64_t scalar_elements = nx::ops::hunting_nans() ? 0 : how.scalar_elements;
    auto simplified = std::make_shared<const ir::Program>(ir::simplify(*program));
    code = compile(std::make_shared<const ir::Program>(ir::simplify_loops(*simplified, scalar_elements)),
                   simplified);
  } else {
    code = compile(std::move(program));
  }
  native::promote_after(*code, how.native_after);
  return code;
}

namespace {

// C++ objects in a program (equal compares them by address).
bool holds_cpp_code(const ir::Program& program) {
  return std::any_of(program.equations.begin(), program.equations.end(), [](const ir::Equation& eq) {
    const auto* root = std::get_if<ir::RootInfo>(&eq.info);
    if (eq.code<ir::LinearCall>() || eq.code<ir::CheckCall>() || eq.code<ir::HostCall>() ||
        eq.code<ir::CustomRule>() || (root && root->linear_solve))
      return true;
    return std::any_of(eq.programs.begin(), eq.programs.end(),
                       [](const auto& sub) { return holds_cpp_code(*sub); });
  });
}

// The codes shared_build keeps, the latest used first.
class SharedCodes {
 public:
  std::shared_ptr<const Code> find(const ir::Program& program, std::size_t hash) {
    std::lock_guard lock(mutex_);
    for (auto at = kept_.begin(); at != kept_.end(); ++at)
      if (at->hash == hash && ir::equal(*at->code->program, program)) {
        kept_.splice(kept_.begin(), kept_, at);
        ++counts_.found;
        return kept_.front().code;
      }
    return nullptr;
  }
  void keep(std::shared_ptr<const Code> code, std::size_t hash) {
    std::lock_guard lock(mutex_);
    kept_.push_front({hash, std::move(code)});
    if (kept_.size() > kept_codes) kept_.pop_back();
    ++counts_.built;
  }
  void count_built() {
    std::lock_guard lock(mutex_);
    ++counts_.built;
  }
  SharedBuilds counts() {
    std::lock_guard lock(mutex_);
    return counts_;
  }

 private:
  struct Kept {
    std::size_t hash;
    std::shared_ptr<const Code> code;
  };
  std::mutex mutex_;
  std::list<Kept> kept_;
  SharedBuilds counts_;
};

SharedCodes& shared_codes() {
  static SharedCodes codes;
  return codes;
}

}  // namespace

std::shared_ptr<const Code> shared_build(std::shared_ptr<const ir::Program> program) {
  SharedCodes& codes = shared_codes();
  if (holds_cpp_code(*program)) {
    codes.count_built();
    return build(std::move(program), {});
  }
  const std::size_t hash = ir::structural_hash(*program);
  if (std::shared_ptr<const Code> found = codes.find(*program, hash)) return found;
  std::shared_ptr<const Code> code = build(std::move(program), {});
  codes.keep(code, hash);
  return code;
}

SharedBuilds shared_builds() { return shared_codes().counts(); }

}  // namespace rune::vm
