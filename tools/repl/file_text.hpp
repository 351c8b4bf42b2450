// Reading a file the user names (a program, an argument's elements), with
// the system's reason when it cannot be read.
#pragma once

#include <string>

namespace rune::repl {

// The file's text (at most ir::max_file_bytes); throws std::invalid_argument
// "cannot read FILE: No such file or directory" (the reason as ir::read_file
// gives it).
std::string file_text(const std::string& path);

}  // namespace rune::repl
