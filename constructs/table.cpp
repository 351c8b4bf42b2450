#include "constructs/table.hpp"

#include "ops/errors.hpp"

namespace rune::ir {

const ConstructRules& construct_rules(OpKind kind) {
  using namespace constructs;
  switch (kind) {
#define CONSTRUCT(kind) \
  case OpKind::kind: return kind##_rules;
#include "ir/constructs.def"
#undef CONSTRUCT
    case OpKind::primitive:
    case OpKind::constant: break;
  }
  nx::ops::internal_error("the construct table", "asked for the rules of a primitive or constant equation");
}

std::optional<OpKind> construct_named(std::string_view word) {
  for (OpKind kind : construct_kinds)
    if (const auto& text = construct_rules(kind).text; text && text->word == word) return kind;
  return std::nullopt;
}

}  // namespace rune::ir
