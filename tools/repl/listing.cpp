#include "tools/repl/listing.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "rune/nx.hpp"

namespace rune::repl {

namespace {

// Every %n in `text`.
std::vector<int> names_in(const std::string& text) {
  std::vector<int> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%' || i + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i + 1]))) continue;
    int n = 0;
    while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) n = n * 10 + (text[++i] - '0');
    out.push_back(n);
  }
  return out;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The elements of a constant as the printer writes them ("1", "[1, 2]"):
// its text without the dtype and shape before them.
std::string elements_text(const nx::Tensor& t) {
  const std::string type = std::string(nx::name(t.dtype())) + " " + nx::to_string(t.shape()) + " ";
  return nx::to_string(t).substr(type.size());
}

// Each constant of `program` and its sub-programs, by number.
void constants(const ir::Program& program, const Names& names, std::map<int, nx::Tensor>& out) {
  for (const ir::Equation& eq : program.equations) {
    if (eq.kind == ir::OpKind::constant) out[names.number(program, eq.outputs[0])] = eq.constant;
    for (const auto& sub : eq.programs) constants(*sub, names, out);
  }
}

// A constant's line: its bits and, after them, its elements in decimal; of
// more than `shown_elements`, neither (print shows them).
void annotate_constant(std::string& line, int number, const nx::Tensor& value) {
  if (value.numel() <= Listing::shown_elements) {
    line += "  ; " + elements_text(value);
    return;
  }
  const std::size_t bits = line.find(" = constant ");
  if (bits == std::string::npos) return;
  line = line.substr(0, bits) + " = constant (" + std::to_string(value.numel()) + " elements elided; print %" +
         std::to_string(number) + " shows them)";
}

}  // namespace

Listing::Listing(const std::string& text, const ir::Program& program, const Names& names) {
  std::map<int, nx::Tensor> values;
  constants(program, names, values);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::string unindented = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    // The names a line defines: a program's parameters, or the outputs
    // before an equation's " = " (its operands come after).
    std::string defined;
    if (starts_with(unindented, "program (")) defined = unindented;
    else if (starts_with(unindented, "%")) defined = unindented.substr(0, unindented.find(" = "));
    for (int n : names_in(defined)) {
      where_[n] = lines_.size();
      if (auto value = values.find(n); value != values.end()) annotate_constant(line, n, value->second);
    }
    lines_.push_back(line);
  }
}

std::string Listing::text() const {
  std::string out;
  for (const std::string& line : lines_) out += line + '\n';
  return out;
}

std::vector<std::string> Listing::definition(int number) const {
  auto it = where_.find(number);
  if (it == where_.end()) return {};
  auto unindented = [&](std::size_t i) { return lines_[i].substr(lines_[i].find_first_not_of(' ')); };
  std::vector<std::string> out{unindented(it->second)};
  std::size_t next = it->second + 1;
  if (next < lines_.size() && starts_with(unindented(next), "with ")) out.push_back("  " + unindented(next));
  return out;
}

}  // namespace rune::repl
