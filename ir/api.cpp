// The rune entry points over programs: staging for the templates, and
// Program's text, files and evaluation.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "ir/construct.hpp"
#include "ir/eval.hpp"
#include "ir/staging.hpp"
#include "ir/text.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"
#include "rune/program.hpp"

namespace rune {

namespace ir {

std::optional<std::string> read_file(const char* path, std::string* text) {
  // (C stdio, not a stream: it sets errno, whose text is the reason)
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path, "rb"), &std::fclose);
  if (!in) return std::strerror(errno);
  text->clear();
  std::vector<char> buffer(std::size_t(1) << 16);
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), in.get())) {
    if (n > max_file_bytes - text->size())
      return "it is longer than " + std::to_string(max_file_bytes) + " bytes, the most rune reads of a file";
    text->append(buffer.data(), n);
  }
  if (std::ferror(in.get())) return std::strerror(errno);  // (a folder opens, and fails here: "Is a directory")
  return std::nullopt;
}

}  // namespace ir

namespace detail {

struct Staging::State {
  ir::StagingTrace trace;
  std::optional<nx::ops::TraceScope> scope;
  explicit State(std::string_view entry) : trace(entry) { scope.emplace(trace); }
};

Staging::Staging(std::string_view entry_point) : state_(std::make_unique<State>(entry_point)) {}
Staging::~Staging() = default;

std::vector<nx::Tensor> Staging::parameters(std::span<const nx::Tensor> like) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : like) out.push_back(state_->trace.add_param(nx::ops::type_of(t)));
  return out;
}

std::vector<nx::Tensor> Staging::row_parameters(std::span<const nx::Tensor> like) {
  std::vector<nx::Tensor> out;
  for (const nx::Tensor& t : like) {
    ir::TensorType row = nx::ops::type_of(t);
    row.shape.erase(row.shape.begin());
    out.push_back(state_->trace.add_param(row));
  }
  return out;
}

std::shared_ptr<const ir::Program> Staging::finish(std::span<const nx::Tensor> results) {
  auto program = state_->trace.finish(results);
  state_->scope.reset();
  return program;
}

const std::vector<nx::Tensor>& Staging::captures() const { return state_->trace.captures(); }

bool tracing(std::span<const nx::Tensor> values) {
  if (nx::ops::trace_depth() > 0) return true;
  for (const nx::Tensor& t : values)
    if (t.defined() && t.is_traced()) return true;
  return false;
}

}  // namespace detail

const ir::Program& Program::ir() const {
  if (!impl_) throw std::invalid_argument("rune::Program: the program is empty (it was default-constructed)");
  return *impl_;
}

bool Program::operator==(const Program& other) const {
  if (named() != other.named() || (named() && !(*names_ == *other.names_))) return false;
  return ir::equal(ir(), other.ir());
}

std::span<const std::string> Program::param_names() const {
  return names_ ? std::span<const std::string>(names_->params) : std::span<const std::string>();
}
std::span<const std::string> Program::result_names() const {
  return names_ ? std::span<const std::string>(names_->results) : std::span<const std::string>();
}

// A program with names prints its header (ir/text.hpp); one without, the
// program alone (the format of the API's "Program text").
std::string to_string(const Program& program) { return to_string(program, SourceLines::hidden); }

std::string to_string(const Program& program, SourceLines lines) {
  const bool shown = lines == SourceLines::shown;
  return program.named() ? ir::print_with_header(program.ir(), program.names().get(), shown)
                         : ir::print(program.ir(), shown);
}

std::ostream& operator<<(std::ostream& os, const Program& program) { return os << to_string(program); }

Program parse_program(std::string_view text) {
  ir::Text read = ir::parse_text(text);
  std::shared_ptr<const ir::Names> names;
  if (read.names) names = std::make_shared<const ir::Names>(std::move(*read.names));
  return Program(std::make_shared<ir::Program>(std::move(read.program)), std::move(names));
}

Program load_program(const std::filesystem::path& file) {
  std::string text;
  if (auto problem = ir::read_file(file.c_str(), &text))
    nx::ops::fail("rune::load_program", "cannot read " + file.string() + ": " + *problem);
  return parse_program(text);
}

namespace {
// Whether a program (or a sub-program) runs C++ code that has no text.
bool holds_code(const ir::Program& p) {
  for (const ir::Equation& eq : p.equations) {
    if (!ir::is_construct(eq.kind)) continue;
    const auto& rules = ir::construct_rules(eq.kind);
    if (!rules.text || (rules.holds_code && rules.holds_code(eq))) return true;
    for (const auto& sub : eq.programs)
      if (holds_code(*sub)) return true;
  }
  return false;
}

// What in a program (or a sub-program) names an object of this process,
// which a text read by another cannot name: an add to a rune::Total that no
// collect of the program opens (`collected`: those around p), or a
// collective over a named map's lanes. nullopt when nothing does.
std::optional<std::string> process_object(const ir::Program& p, std::vector<std::uint64_t>& collected) {
  for (const ir::Equation& eq : p.equations) {
    if (eq.kind == ir::OpKind::primitive && nx::ops::info(eq.prim).family == nx::ops::Family::collective)
      return "the program gathers over the lanes of a named map (rune::lanes), an object of this process; save "
             "the function that calls rune::vmap";
    if (!ir::is_construct(eq.kind)) continue;
    const std::uint64_t total = ir::adds_to_total(eq.kind) || eq.kind == ir::OpKind::collect
                                    ? std::get<ir::TotalInfo>(eq.info).total
                                    : 0;
    if (ir::adds_to_total(eq.kind) && std::find(collected.begin(), collected.end(), total) == collected.end())
      return "the program adds to a rune::Total that it does not collect, an object of this process; collect the "
             "total inside the saved function";
    if (eq.kind == ir::OpKind::collect) collected.push_back(total);
    for (const auto& sub : eq.programs)
      if (auto found = process_object(*sub, collected)) return found;
    if (eq.kind == ir::OpKind::collect) collected.pop_back();
  }
  return std::nullopt;
}
}  // namespace

void save_program(const Program& program, const std::filesystem::path& file) {
  if (holds_code(program.ir()))
    nx::ops::fail("rune::save_program",
                  "the program holds C++ code (a rune::callback, an nx::check, a custom rule or a linear solve), which has "
                  "no text");
  std::vector<std::uint64_t> collected;
  if (auto named = process_object(program.ir(), collected)) nx::ops::fail("rune::save_program", *named);
  std::ofstream out(file);
  if (!out) nx::ops::fail("rune::save_program", "cannot write " + file.string());
  out << ir::print_with_header(program.ir(), program.names().get(), /*source_lines=*/true);
  if (!out) nx::ops::fail("rune::save_program", "cannot write " + file.string());
}

}  // namespace rune

