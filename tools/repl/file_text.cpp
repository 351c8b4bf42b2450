#include "tools/repl/file_text.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace rune::repl {

std::string file_text(const std::string& path) {
  // (C stdio, not a stream: it sets errno, whose text is the reason)
  auto fail = [&] { throw std::invalid_argument("cannot read " + path + ": " + std::strerror(errno)); };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) fail();
  std::string text;
  char buffer[1 << 16];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get())) text.append(buffer, n);
  if (std::ferror(file.get())) fail();  // (a folder opens, and fails here: "Is a directory")
  return text;
}

}  // namespace rune::repl
