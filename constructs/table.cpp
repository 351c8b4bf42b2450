#include "constructs/table.hpp"

#include "ops/errors.hpp"

namespace rune::ir {

const ConstructRules& construct_rules(OpKind kind) {
  using namespace constructs;
  switch (kind) {
    case OpKind::scan: return scan_rules;
    case OpKind::iterate: return iterate_rules;
    case OpKind::root: return root_rules;
    case OpKind::remat: return remat_rules;
    case OpKind::total_add: return total_add_rules;
    case OpKind::collect: return collect_rules;
    case OpKind::cond: return cond_rules;
    case OpKind::check: return check_rules;
    case OpKind::callback: return callback_rules;
    case OpKind::custom: return custom_rules;
    case OpKind::linear_call: return linear_call_rules;
    case OpKind::primitive:
    case OpKind::constant: break;
  }
  nx::ops::internal_error("the construct table", "asked for the rules of a primitive or constant equation");
}

std::optional<OpKind> construct_named(std::string_view word) {
  for (OpKind kind : {OpKind::scan, OpKind::iterate, OpKind::cond, OpKind::root, OpKind::remat, OpKind::total_add,
                      OpKind::collect, OpKind::check,
                      OpKind::callback, OpKind::custom, OpKind::linear_call})
    if (const auto& text = construct_rules(kind).text; text && text->word == word) return kind;
  return std::nullopt;
}

}  // namespace rune::ir
