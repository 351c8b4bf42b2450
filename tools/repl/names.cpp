#include "tools/repl/names.hpp"

#include <charconv>
#include <stdexcept>

#include "ir/construct.hpp"

namespace rune::repl {

Names::Names(const ir::Program& program) : numbers_(ir::number_values(program)) { index(program, {}); }

// Records where each number lives and what runs each sub-program.
void Names::index(const ir::Program& program, Owner owner) {
  owners_[&program] = std::move(owner);
  const std::vector<int>& mine = numbers_.at(&program);
  for (std::size_t v = 0; v < mine.size(); ++v) {
    if (mine[v] < 0) continue;
    if (places_.size() <= std::size_t(mine[v])) places_.resize(std::size_t(mine[v]) + 1);
    places_[std::size_t(mine[v])] = {&program, int(v)};
  }
  for (const ir::Equation& eq : program.equations) {
    const int first = eq.outputs.empty() ? -1 : mine[std::size_t(eq.outputs[0])];
    for (std::size_t j = 0; j < eq.programs.size(); ++j) {
      const auto& text = ir::construct_rules(eq.kind).text;
      const std::string part = text ? std::string(text->programs[std::min(j, text->programs.size() - 1)]) : "program";
      index(*eq.programs[j], {first, part, &eq});
    }
  }
}

std::vector<int> Names::numbers(const ir::Program& program, const std::vector<int>& values) const {
  std::vector<int> out;
  for (int v : values) out.push_back(number(program, v));
  return out;
}

std::optional<Names::Place> Names::find(int number) const {
  if (number < 0 || number >= count() || !places_[std::size_t(number)].program) return std::nullopt;
  return places_[std::size_t(number)];
}

std::string Names::Owner::text() const { return "the " + part + " of " + name_text(construct); }

std::string name_text(int number) {
  std::string s(1, '%');  // (not "%" + to_string: GCC 12 warns falsely on that)
  return s + std::to_string(number);
}

int parse_name(const std::string& word) {
  std::string_view digits(word);
  if (!digits.empty() && digits[0] == '%') digits.remove_prefix(1);
  int n = -1;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || n < 0)
    throw std::invalid_argument("'" + word + "' is not a value name like %7");
  return n;
}

}  // namespace rune::repl
