// User errors and the places of the calls that raised them (errors.hpp).
#include "ops/errors.hpp"

#include <cstring>

namespace nx::ops {

namespace {

// The folder rune's sources were compiled from, as the compiler saw it
// ("../" in its own build, "../subprojects/rune/" in a parent's): this
// file's own name less "ops/errors.cpp".
std::string_view source_folder() {
  static const std::string_view folder = [] {
    const std::string_view self = __builtin_FILE();
    return self.substr(0, self.size() - std::strlen("ops/errors.cpp"));
  }();
  return folder;
}

// Whether `file` is one of rune's sources (its programs' included) or public
// headers.
bool own_source(std::string_view file) {
  if (file.find("include/rune/") != file.npos) return true;
  if (!file.starts_with(source_folder())) return false;
  const std::string_view rest = file.substr(source_folder().size());
  for (std::string_view layer : {"ops/", "ir/", "ad/", "batch/", "constructs/", "vm/", "jit/", "capi/", "tools/"})
    if (rest.starts_with(layer)) return true;
  return false;
}

}  // namespace

PlacedError::PlacedError(const std::string& message, const std::string& place)
    : std::invalid_argument(place.empty() ? message : message + " (at " + place + ")"),
      message_(message),
      place_(place) {}

rune::detail::CallSite user_site() {
  const rune::detail::CallSite* site = detail::calling;
  if (!site || !*site || own_source(site->file)) return {};
  return *site;
}

rune::detail::CallSite equation_site() {
  const rune::detail::CallSite site = user_site();
  return site ? site : detail::placing;
}

std::string describe(const rune::detail::CallSite& site) {
  if (!site) return "";
  const std::string_view file = site.file;
  const std::size_t slash = file.find_last_of('/');
  return std::string(slash == file.npos ? file : file.substr(slash + 1)) + ":" + std::to_string(site.line);
}

namespace {
std::string named(std::string_view api, const std::string& message) {
  return std::string(EntryPoint::naming(api)) + ": " + message;
}
}  // namespace

void fail(std::string_view api, const std::string& message) {
  throw PlacedError(named(api, message), describe(user_site()));
}

void fail_running(std::string_view api, const std::string& message) {
  throw RunError(named(api, message), describe(user_site()));
}

}  // namespace nx::ops
