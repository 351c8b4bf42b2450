#include "tools/repl/listing.hpp"

#include <cctype>
#include <sstream>

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

}  // namespace

Listing::Listing(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line.erase(0, line.find_first_not_of(' '));
    // The names a line defines: a program's parameters, or the outputs
    // before an equation's " = " (its operands come after).
    std::string defined;
    if (starts_with(line, "program (")) defined = line;
    else if (starts_with(line, "%")) defined = line.substr(0, line.find(" = "));
    for (int n : names_in(defined)) where_[n] = lines_.size();
    lines_.push_back(line);
  }
}

std::vector<std::string> Listing::definition(int number) const {
  auto it = where_.find(number);
  if (it == where_.end()) return {};
  std::vector<std::string> out{lines_[it->second]};
  std::size_t next = it->second + 1;
  if (next < lines_.size() && starts_with(lines_[next], "with ")) out.push_back("  " + lines_[next]);
  return out;
}

}  // namespace rune::repl
