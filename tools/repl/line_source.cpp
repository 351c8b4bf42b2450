#include "tools/repl/line_source.hpp"

#include <istream>
#include <ostream>

namespace rune::repl {

std::optional<std::string> StreamLines::read_line(const std::string& prompt) {
  std::string line;
  if (!std::getline(in_, line)) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();  // (a file written on Windows)
  std::string echoed = prompt + line;
  echoed.erase(echoed.find_last_not_of(" \t") + 1);  // (no trailing blanks in transcripts)
  echo_ << echoed << '\n';
  return line;
}

}  // namespace rune::repl
