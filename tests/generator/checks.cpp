#include "checks.hpp"

#include <algorithm>


#include "ir/construct.hpp"
#include "ir/program.hpp"
#include "ops/concrete.hpp"

namespace gen {

namespace {

std::string type_text(const nx::Tensor& t) { return std::string(nx::name(t.dtype())) + " " + nx::to_string(t.shape()); }

// The elements' bytes in C order.
std::string bytes_of(const nx::Tensor& t) {
  const nx::Tensor c = nx::ops::contiguous(t);
  return std::string(nx::ops::data_of<char>(c), std::size_t(c.numel()) * nx::size_of(c.dtype()));
}

// Where two programs first differ, for a report (ir::equal only says whether).
std::string first_difference(const rune::ir::Program& a, const rune::ir::Program& b, const std::string& at) {
  if (a.types.size() != b.types.size()) return at + "the value counts differ";
  for (std::size_t v = 0; v < a.types.size(); ++v)
    if (a.types[v] != b.types[v])
      return at + "value " + std::to_string(v) + " is " + nx::ops::to_string(a.types[v]) + ", parsed " +
             nx::ops::to_string(b.types[v]);
  if (a.params != b.params || a.results != b.results) return at + "the parameters or results differ";
  if (a.equations.size() != b.equations.size()) return at + "the equation counts differ";
  for (std::size_t i = 0; i < a.equations.size(); ++i) {
    const auto &x = a.equations[i], &y = b.equations[i];
    const std::string here = at + "equation " + std::to_string(i);
    if (x.kind != y.kind || x.inputs != y.inputs || x.outputs != y.outputs) return here + ": kind, inputs or outputs";
    if (x.prim != y.prim || !(x.params == y.params)) return here + ": primitive or parameters";
    if (x.info != y.info) return here + ": construct counts";
    if (x.programs.size() != y.programs.size()) return here + ": sub-program counts";
    for (std::size_t j = 0; j < x.programs.size(); ++j)
      if (std::string d = first_difference(*x.programs[j], *y.programs[j], here + ", sub-program " + std::to_string(j) + ": ");
          !d.empty())
        return d;
    if (x.kind == rune::ir::OpKind::constant && bytes_of(x.constant) != bytes_of(y.constant))
      return here + ": constant elements";
  }
  return {};
}

}  // namespace

bool has_text(const rune::ir::Program& program) {
  for (const auto& eq : program.equations) {
    if (!rune::ir::is_construct(eq.kind)) continue;
    const auto& rules = rune::ir::construct_rules(eq.kind);
    if (!rules.text || (rules.holds_code && rules.holds_code(eq))) return false;
    for (const auto& sub : eq.programs)
      if (!has_text(*sub)) return false;
  }
  return true;
}

std::string check_round_trip(const rune::Program& traced) {
  const std::string text = rune::to_string(traced);
  rune::Program parsed;
  try {
    parsed = rune::parse_program(text);
  } catch (const std::exception& e) {
    return std::string("the text does not parse back: ") + e.what();
  }
  if (!rune::ir::equal(traced.ir(), parsed.ir()))
    return "the text parses back to a different program (" + first_difference(traced.ir(), parsed.ir(), "") +
           "), which prints as\n" + rune::to_string(parsed);
  if (const std::string again = rune::to_string(parsed); again != text)
    return "the parsed program prints differently:\n" + again;
  return {};
}

std::string compare_bits(std::span<const nx::Tensor> expected, std::span<const nx::Tensor> got) {
  if (expected.size() != got.size())
    return std::to_string(got.size()) + " results, eagerly " + std::to_string(expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::string where = "result " + std::to_string(i) + ": ";
    if (type_text(got[i]) != type_text(expected[i]))
      return where + type_text(got[i]) + ", eagerly " + type_text(expected[i]);
    const std::string a = bytes_of(got[i]), b = bytes_of(expected[i]);
    if (a != b) {
      const std::size_t size = nx::size_of(got[i].dtype());
      const std::size_t at = std::size_t(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin()) / size;
      auto bits = [&](const std::string& bytes) {  // (the element's bytes, last first: its bits on this machine)
        std::string hex = "0x";
        for (std::size_t k = size; k-- > 0;) {
          const char digits[] = "0123456789abcdef";
          const auto byte = static_cast<unsigned char>(bytes[at * size + k]);
          hex.append(1, digits[byte >> 4]).append(1, digits[byte & 15]);
        }
        return hex;
      };
      return where + "first at element " + std::to_string(at) + " (in C order): " + bits(a) + ", eagerly " +
             bits(b) + "\n" + nx::to_string(got[i]) + "\neagerly " + nx::to_string(expected[i]);
    }
  }
  return {};
}

std::string check_types(std::span<const nx::Tensor> results, const Block& block) {
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Type& want = block.types[std::size_t(block.results[i])];
    if (results[i].dtype() != want.dtype || results[i].shape() != want.shape)
      return "result " + std::to_string(i) + " is " + type_text(results[i]) + ", the generator's model says " +
             std::string(nx::name(want.dtype)) + " " + nx::to_string(want.shape);
  }
  return {};
}

std::string check_function(const Function& f, const std::vector<nx::Tensor>& args,
                           const std::vector<nx::Tensor>& eager, rune::Program* traced) {
  *traced = rune::program(f, args);
  const bool text = has_text(traced->ir());
  if (std::string found = text ? check_round_trip(*traced) : std::string(); !found.empty()) return found;
  for (const Executor& e : executors()) {
    if (e.reads_text && !text) continue;
    std::vector<nx::Tensor> got;
    try {
      got = e.run(f, *traced, args);
    } catch (const std::exception& ex) {
      return std::string(e.name) + " threw: " + ex.what();
    }
    if (std::string found = compare_bits(eager, got); !found.empty())
      return std::string(e.name) + " differs from eager: " + found;
  }
  return {};
}

}  // namespace gen
