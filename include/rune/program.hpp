// Programs: functions traced once into equations, printed, parsed, saved,
// loaded and run without the C++ that traced them.
#pragma once

#include <concepts>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "rune/detail/diagnose.hpp"
#include "rune/detail/staging.hpp"
#include "rune/tree.hpp"

namespace rune {

namespace vm {
struct Code;
}
namespace ir {
struct Names;
}

// The deepest program text reads: sub-programs (a scan's step) nested at
// most this many levels one inside another.
inline constexpr int max_nesting = 64;

class Program {
 public:
  Program() = default;
  explicit Program(std::shared_ptr<const ir::Program> p, std::shared_ptr<const ir::Names> names = nullptr)
      : impl_(std::move(p)), names_(std::move(names)) {}
  const ir::Program& ir() const;
  const std::shared_ptr<const ir::Program>& shared() const { return impl_; }
  // The paths of the parameters and of the results in the structures the
  // program was traced from ("0.position", "1.w"; "" for a lone tensor), as
  // Compiled::program records them and a saved text's header keeps them.
  // Empty for a program without names (from rune::program, or text without
  // a header).
  bool named() const { return names_ != nullptr; }
  std::span<const std::string> param_names() const;
  std::span<const std::string> result_names() const;
  const std::shared_ptr<const ir::Names>& names() const { return names_; }
  // Its bytecode, compiled on first use (by rune::run or rune::bytecode)
  // and shared by the program's copies.
  const vm::Code& code() const;
  // Structural equality (constants bit for bit).
  bool operator==(const Program& other) const;

 private:
  struct Compiled {
    std::once_flag once;
    std::shared_ptr<const vm::Code> code;
  };
  std::shared_ptr<const ir::Program> impl_;
  std::shared_ptr<const ir::Names> names_;
  std::shared_ptr<Compiled> compiled_ = std::make_shared<Compiled>();
};

std::string to_string(const Program& program);
// Whether the text shows where each equation was traced: the file and line
// of the nx call or construct that made it, as a comment ending the
// equation's first line (`  ; cloth.hpp:88`). to_string(program) and << hide
// them; save_program writes them; parse_program reads them back.
enum class SourceLines { hidden, shown };
std::string to_string(const Program& program, SourceLines lines);
std::ostream& operator<<(std::ostream& os, const Program& program);
Program parse_program(std::string_view text);
Program load_program(const std::filesystem::path& file);
void save_program(const Program& program, const std::filesystem::path& file);
// Evaluates the program on concrete arguments (its parameters in order),
// after checking their count, dtypes and shapes: its bytecode (compiled once
// per program) runs on the VM.
std::vector<nx::Tensor> run(const Program& program, const std::vector<nx::Tensor>& args);
// The same, writing the results into caller memory: `results` are tensors
// borrowing it (nx::borrow of pointers to non-const), one per result, of the
// results' dtypes and shapes. Nothing is allocated in the steady state (the
// run's buffers come from nx's pools), so a frame loop can call it every
// frame; the arguments may be borrowed too, even the results' memory (each
// result is computed before any is written).
void run_into(const Program& program, std::span<const nx::Tensor> args, std::span<const nx::Tensor> results);
// The listing of the program's bytecode (docs/vm.md).
std::string bytecode(const Program& program);

// Traces f over stand-ins of args (any structures; static leaves stay as
// they are) and returns what it computes as a program whose parameters are
// the tensor leaves of args in order and whose results are the tensor leaves
// of f's result. f runs once; nothing is computed.
template <class F, class... Args>
  requires(detail::Structures<Args...> && std::invocable<F&, const Args&...>)
Program program(F f, const Args&... args) {
  detail::Staging staging("rune::program");
  auto stand_in = [&](const auto& arg) {
    std::vector<nx::Tensor> params = staging.parameters(leaves(arg));
    return rebuild(arg, std::span<const nx::Tensor>(params));
  };
  // (a braced list evaluates left to right: parameters follow the arguments)
  std::tuple<decltype(stand_in(args))...> traced{stand_in(args)...};
  auto result = std::apply(f, traced);
  std::vector<nx::Tensor> outs = result_leaves("rune::program", result);
  return Program(staging.finish(outs));
}
template <class F, class... Args> Program program(F, const Args&...) {
  RUNE_DETAIL_DIAGNOSE_CALL("rune::program", "an argument is", (std::invocable<F&, const Args&...>),
                            "the function cannot be called with these arguments", Args...);
  return {};
}

}  // namespace rune
