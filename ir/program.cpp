#include "ir/program.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include <boost/container_hash/hash.hpp>

#include "ir/construct.hpp"
#include "ops/concrete.hpp"

namespace rune::ir {

namespace {
bool same_constant(const nx::Tensor& a, const nx::Tensor& b) {
  if (nx::ops::type_of(a) != nx::ops::type_of(b)) return false;
  nx::Tensor ca = nx::ops::contiguous(a), cb = nx::ops::contiguous(b);
  return std::memcmp(nx::ops::data_of<char>(ca), nx::ops::data_of<char>(cb),
                     std::size_t(a.numel()) * nx::size_of(a.dtype())) == 0;
}

// C++ code (checks, callbacks, custom rules) is the same only when it is the
// same object (ConstructInfo).
bool equal(const Equation& a, const Equation& b) {
  if (a.kind != b.kind || a.inputs != b.inputs || a.outputs != b.outputs) return false;
  switch (a.kind) {
    case OpKind::primitive: return a.prim == b.prim && a.params == b.params;
    case OpKind::constant: return same_constant(a.constant, b.constant);
    default: break;
  }
  if (a.info != b.info || a.programs.size() != b.programs.size())
    return false;
  for (std::size_t i = 0; i < a.programs.size(); ++i)
    if (!equal(*a.programs[i], *b.programs[i])) return false;
  return true;
}
}  // namespace

bool equal(const Program& a, const Program& b) {
  if (a.types != b.types || a.params != b.params || a.results != b.results ||
      a.equations.size() != b.equations.size())
    return false;
  for (std::size_t i = 0; i < a.equations.size(); ++i)
    if (!equal(a.equations[i], b.equations[i])) return false;
  return true;
}

const char* source_file(std::string_view name) {
  // (bounded: texts read from untrusted files cannot make the process keep
  // names without end; a name past the bound is no place)
  constexpr std::size_t most_names = 4096, longest_name = 4096;
  static std::mutex mutex;
  static auto* names = new std::set<std::string, std::less<>>;  // never freed: sites point into it
  const std::lock_guard lock(mutex);
  auto found = names->find(name);
  if (found != names->end()) return found->c_str();
  if (names->size() >= most_names || name.size() > longest_name) return nullptr;
  return names->emplace(name).first->c_str();
}

std::size_t structural_hash(const Program& program) {
  std::size_t seed = program.types.size();
  for (const TensorType& t : program.types) {
    boost::hash_combine(seed, int(t.dtype));
    boost::hash_range(seed, t.shape.begin(), t.shape.end());
  }
  boost::hash_range(seed, program.params.begin(), program.params.end());
  boost::hash_range(seed, program.results.begin(), program.results.end());
  for (const Equation& eq : program.equations) {
    boost::hash_combine(seed, int(eq.kind));
    boost::hash_combine(seed, int(eq.prim));
    boost::hash_range(seed, eq.inputs.begin(), eq.inputs.end());
    boost::hash_range(seed, eq.outputs.begin(), eq.outputs.end());
    for (const auto& sub : eq.programs) boost::hash_combine(seed, structural_hash(*sub));
  }
  return seed;
}

Lowering lowering(const Equation& eq) {
  if (!is_construct(eq.kind) || eq.programs.empty()) return Lowering::eager;  // (a custom rule called directly)
  return construct_rules(eq.kind).lowering;
}

bool has_effect(const Equation& eq) {
  if (!is_construct(eq.kind)) return false;
  if (construct_rules(eq.kind).effect) return true;
  for (const auto& sub : eq.programs)
    for (const Equation& inner : sub->equations)
      if (has_effect(inner)) return true;
  return false;
}

namespace {
bool left_out_of_replays(const Equation& eq) {
  return is_construct(eq.kind) && !construct_rules(eq.kind).replayed;
}
}  // namespace

bool holds_unreplayed(const Program& program) {
  return std::any_of(program.equations.begin(), program.equations.end(),
                     [](const Equation& eq) { return left_out_of_replays(eq) || holds_unreplayed(eq); });
}

bool holds_unreplayed(const Equation& eq) {
  return std::any_of(eq.programs.begin(), eq.programs.end(), [](const auto& sub) { return holds_unreplayed(*sub); });
}

Equation replayed_part(const Equation& eq) {
  Equation out = eq;
  for (auto& sub : out.programs) {
    auto copy = std::make_shared<Program>(*sub);
    std::erase_if(copy->equations, left_out_of_replays);  // (they have no outputs)
    for (Equation& inner : copy->equations) inner = replayed_part(inner);
    sub = std::move(copy);
  }
  return out;
}

std::shared_ptr<const Program> deep_copy(const Program& program) {
  auto copy = std::make_shared<Program>(program);
  for (Equation& eq : copy->equations)
    for (auto& sub : eq.programs) sub = deep_copy(*sub);
  return copy;
}

std::vector<TensorType> construct_output_types(const Equation& eq, const std::vector<TensorType>& inputs) {
  return construct_rules(eq.kind).output_types(eq, inputs);
}

}  // namespace rune::ir
