#include "vm/verify.hpp"

#include <stdexcept>
#include <string>

#include "vm/operands.hpp"

namespace rune::vm {

namespace {

std::size_t table_size(const Code& code, Table table) {
  switch (table) {
    case Table::calls: return code.calls.size();
    case Table::kernels: return code.kernels.size();
    case Table::scans: return code.scans.size();
    case Table::invokes: return code.invokes.size();
    case Table::releases: return code.releases.size();
    case Table::none: break;
  }
  return 0;
}

std::string name(Location at) {
  std::string out(1, at.scalar ? 's' : 't');
  return out += std::to_string(at.index);
}

class Verifier {
 public:
  explicit Verifier(const Code& code)
      : code_(code), scalars_(code.scalars.size(), false), tensors_(code.tensors.size(), false) {}

  void run() {
    for (Location at : code_.params) define(at, "a parameter");
    for (Location at : code_.constants) define(at, "a constant");
    for (std::size_t pc = 0; pc < code_.instructions.size(); ++pc) {
      const Instruction& in = code_.instructions[pc];
      where_ = "instruction " + std::to_string(pc) + " (" + std::string(info(in.op).name) + ")";
      const Table table = info(in.op).table;
      if (table != Table::none && (in.aux < 0 || std::size_t(in.aux) >= table_size(code_, table)))
        fail("indexes entry " + std::to_string(in.aux) + " of a table of " +
             std::to_string(table_size(code_, table)));
      for (Location at : reads(code_, in))
        if (!defined(at)) fail("reads " + name(at) + " before anything writes it");
      for (Location at : writes(code_, in)) define(at, "its result");
    }
    where_ = "the results";
    for (Location at : code_.results)
      if (!defined(at)) fail("name " + name(at) + ", which nothing writes");
    for (const ScanOp& scan : code_.scans) verify(*scan.step);
    for (const Invoke& invoke : code_.invokes)
      for (const auto& sub : invoke.codes) verify(*sub);
  }

 private:
  std::vector<bool>& file(Location at) { return at.scalar ? scalars_ : tensors_; }
  bool in_range(Location at) { return at.index >= 0 && std::size_t(at.index) < file(at).size(); }
  bool defined(Location at) {
    if (!in_range(at)) fail("names " + name(at) + ", past the code's registers");
    return file(at)[std::size_t(at.index)];
  }
  void define(Location at, const char* what) {
    if (!in_range(at)) fail(std::string(what) + " is " + name(at) + ", past the code's registers");
    file(at)[std::size_t(at.index)] = true;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error("vm::verify: " + where_ + " " + what);  // (no listing: it would read what is broken)
  }

  const Code& code_;
  std::vector<bool> scalars_, tensors_;
  std::string where_ = "the parameters";
};

}  // namespace

void verify(const Code& code) { Verifier(code).run(); }

}  // namespace rune::vm
