#include "tools/repl/file_text.hpp"

#include <stdexcept>

#include "ir/text.hpp"

namespace rune::repl {

std::string file_text(const std::string& path) {
  std::string text;
  if (auto problem = ir::read_file(path.c_str(), &text)) throw std::invalid_argument("cannot read " + path + ": " + *problem);
  return text;
}

}  // namespace rune::repl
