// User errors: std::invalid_argument whose text starts with the entry point.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace nx::ops {

[[noreturn]] inline void fail(std::string_view api, const std::string& message) {
  std::string text(api);
  text += ": ";
  text += message;
  throw std::invalid_argument(text);
}

}  // namespace nx::ops
