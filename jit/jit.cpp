// rune::jit's work below the template: compiling a traced program (the
// passes, then bytecode), executing it (vm/executor.hpp), donation and
// retrace reports.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <variant>

#include "batch/batch_trace.hpp"
#include "ir/text.hpp"
#include "ops/concrete.hpp"
#include "rune/detail/compiled.hpp"
#include "vm/executables.hpp"
#include "vm/executor.hpp"

namespace rune::detail {

std::shared_ptr<const vm::Code> compile(std::shared_ptr<const ir::Program> traced, std::int64_t scalar_elements,
                                        std::int64_t native_after) {
  return vm::build(std::move(traced), {.passes = true, .scalar_elements = scalar_elements, .native_after = native_after});
}

Values execute(const vm::Code& code, std::span<const nx::Tensor> args, std::span<const nx::Tensor> captures) {
  auto with_captures = [&] {
    std::vector<nx::Tensor> in(args.begin(), args.end());
    in.insert(in.end(), captures.begin(), captures.end());
    return vm::execute_apart(code, in, "rune::jit");
  };
  Values out = captures.empty() ? vm::execute_apart(code, args, "rune::jit") : with_captures();
  for (const nx::Tensor& t : args)
    if (t.impl()->donated_to_call && t.impl()->storage) t.impl()->storage->donated.store(true);
  return out;
}

Program named_program(const Executable& exe, std::vector<std::string> params, std::vector<std::string> results) {
  return Program(exe.code->program, std::make_shared<const ir::Names>(ir::Names{std::move(params), std::move(results)}));
}

namespace {
// The path of the first fact two keys of one type differ in, when it is a
// static leaf's value.
std::optional<std::string> changed_static_leaf(const TreeKey& here, const TreeKey& previous) {
  if (here.type() != previous.type()) return std::nullopt;
  for (std::size_t i = 0; i < here.entries().size(); ++i) {
    const TreeKey::Entry& a = here.entries()[i];
    if (a.fact == previous.entries()[i].fact) continue;
    if (!std::holds_alternative<TreeKey::Value>(a.fact)) return std::nullopt;
    return a.path;
  }
  return std::nullopt;
}
}  // namespace

RunningMaps running_maps() {
  RunningMaps maps;
  for (int level = 1; level <= nx::ops::trace_depth(); ++level)
    if (auto* map = dynamic_cast<const batch::BatchTrace*>(&nx::ops::trace_at(level)))
      maps.push_back({map->axis(), map->lanes()});
  return maps;
}

namespace {
// "[3 lanes of axis 1, 2 lanes]": the maps around a call, outermost first.
std::string maps_text(const RunningMaps& maps) {
  std::string s = "[";
  for (const RunningMap& m : maps) {
    if (s.size() > 1) s += ", ";
    s += std::to_string(m.lanes) + " lanes";
    if (m.axis != 0) s += " of axis " + std::to_string(m.axis);
  }
  return s + "]";
}

// The first difference between two call keys: in the arguments, or in the
// maps around the call.
std::optional<std::string> call_difference(const CallKey& here, const CallKey& previous) {
  if (auto d = first_difference(here.args, previous.args, "here", "in the previous key")) return d;
  if (here.maps == previous.maps) return std::nullopt;
  return "the maps around the call: " + maps_text(here.maps) + " here, " + maps_text(previous.maps) +
         " in the previous key";
}
}  // namespace

void report_retrace(const CallKey& here, const CallKey& previous, int traced_in_a_row, bool& warned) {
  const std::optional<std::string> difference = call_difference(here, previous);
  const char* debug = std::getenv("RUNE_JIT_DEBUG");  // read at each retrace: they are rare
  if (debug && std::atoi(debug) != 0 && difference) std::cerr << "rune::jit: retrace: " << *difference << '\n';
  if (warned || traced_in_a_row < retrace_warning_calls || !difference) return;
  warned = true;
  std::cerr << "rune::jit: warning: traced again on each of the last " << traced_in_a_row << " calls; ";
  if (auto path = changed_static_leaf(here.args, previous.args))  // (the difference reads "<path>: value ...")
    std::cerr << "the static leaf " << path_name(*path) << " keeps changing ("
              << difference->substr(path_name(*path).size() + 2)
              << "): a value that changes from call to call belongs in a tensor (nx::scalar)";
  else
    std::cerr << "the latest difference: " << *difference;
  std::cerr << " (RUNE_JIT_DEBUG=1 reports every retrace)\n";
}

}  // namespace rune::detail
