#include <cstring>
#include <map>

#include "ir/construct.hpp"
#include "ir/text.hpp"
#include "ops/concrete.hpp"
#include "ops/errors.hpp"

namespace rune::ir {

namespace {

std::string hex_bits(const void* p, std::size_t bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = bytes; i-- > 0;) {  // little-endian: the last byte is the most significant
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
  }
  return s;
}

std::string type_text(const TensorType& t) {
  return std::string(nx::name(t.dtype)) + " " + nx::to_string(t.shape) + " at " + std::string(t.placement.name());
}

std::string list_text(const nx::Shape& v) { return nx::to_string(v); }

// The parameters of a primitive that differ from their defaults.
std::string params_text(const Params& p) {
  const Params d;
  std::string s;
  if (p.axes != d.axes) s += " axes=" + list_text(p.axes);
  if (p.shape != d.shape) s += " shape=" + list_text(p.shape);
  if (p.starts != d.starts) s += " starts=" + list_text(p.starts);
  if (p.stops != d.stops) s += " stops=" + list_text(p.stops);
  if (p.steps != d.steps) s += " steps=" + list_text(p.steps);
  if (p.lo != d.lo) s += " lo=" + list_text(p.lo);
  if (p.hi != d.hi) s += " hi=" + list_text(p.hi);
  if (p.interior != d.interior) s += " interior=" + list_text(p.interior);
  if (p.dtype != d.dtype) s += " dtype=" + std::string(nx::name(p.dtype));
  if (std::memcmp(&p.value, &d.value, sizeof(double)) != 0) s += " value=" + hex_bits(&p.value, sizeof(double));
  if (p.axis != d.axis) s += " axis=" + std::to_string(p.axis);
  if (p.mode == nx::ops::IndexMode::drop) s += " mode=drop";
  return s;
}

// Numbers values in order of definition: parameters, then each equation's
// outputs followed by its sub-programs' values.
void number(const Program& p, ValueNumbers& numbers, int& next) {
  std::vector<int>& mine = numbers[&p];
  mine.assign(p.types.size(), -1);
  for (int v : p.params) mine[std::size_t(v)] = next++;
  for (const Equation& eq : p.equations) {
    for (int v : eq.outputs) mine[std::size_t(v)] = next++;
    for (const auto& sub : eq.programs) number(*sub, numbers, next);
  }
}

// Which values the text types without help: equation outputs (declared),
// Map operands (declared with the expression), and through a scan, a value
// passed as an input whose step parameter is typed, or the reverse. The
// parser infers the same; a parameter outside this set is printed with its
// type in its program's header.
using Typed = std::map<const Program*, std::vector<bool>>;

void mark_declared(const Program& p, Typed& typed) {
  std::vector<bool>& mine = typed[&p];
  mine.assign(p.types.size(), false);
  for (const Equation& eq : p.equations) {
    for (int v : eq.outputs) mine[std::size_t(v)] = true;
    if (eq.kind == OpKind::primitive && nx::ops::is_elementwise(eq.prim))
      for (int v : eq.inputs) mine[std::size_t(v)] = true;
    for (const auto& sub : eq.programs) mark_declared(*sub, typed);
  }
}

// Passes types across constructs until nothing changes; true if anything did.
bool propagate(const Program& p, Typed& typed) {
  bool changed = false;
  for (const Equation& eq : p.equations) {
    if (!is_construct(eq.kind) || !construct_rules(eq.kind).text) continue;
    const auto source = construct_rules(eq.kind).param_source;
    for (std::size_t j = 0; j < eq.programs.size(); ++j) {
      const Program& sub = *eq.programs[j];
      for (std::size_t k = 0; k < sub.params.size(); ++k) {
        bool row = false;
        const int i = source(eq, j, k, &row);
        if (i < 0) continue;
        auto outer = typed[&p][std::size_t(eq.inputs[std::size_t(i)])];
        auto inner = typed[&sub][std::size_t(sub.params[k])];
        if (outer != inner) {
          outer = inner = true;
          changed = true;
        }
      }
      changed = propagate(sub, typed) || changed;
    }
  }
  return changed;
}

Typed typed_values(const Program& program) {
  Typed typed;
  mark_declared(program, typed);
  while (propagate(program, typed)) {
  }
  return typed;
}

class Printer {
 public:
  std::string out;
  ValueNumbers numbers;
  Typed typed;
  bool source_lines = false;  // each equation's site as a comment ending its first line

  void program(const Program& p, int indent) {
    const Program* saved = current_;
    current_ = &p;
    std::string params;
    for (std::size_t i = 0; i < p.params.size(); ++i) {
      const int v = p.params[i];
      params += (i ? ", " : "") + name(v);
      if (!typed.at(&p)[std::size_t(v)]) params += " : " + type_text(p.types[std::size_t(v)]);
    }
    line(indent, "program (" + params + ")");
    for (const Equation& eq : p.equations) equation(eq, p, indent + 2);
    line(indent + 2, "return " + names_of(p.results));
    current_ = saved;
  }

 private:
  const Program* current_ = nullptr;

  std::string comment_;  // for the next line: its equation's site

  void line(int indent, const std::string& text) {
    out.append(std::size_t(indent), ' ');
    out += text;
    out += comment_;
    comment_.clear();
    out += '\n';
  }
  std::string name(int v) const {
    std::string s(1, '%');  // (not "%" + to_string: GCC 12 warns falsely on that)
    s += std::to_string(numbers.at(current_)[std::size_t(v)]);
    return s;
  }
  std::string names_of(const std::vector<int>& values) const {
    std::string s;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i) s += ", ";
      s += name(values[i]);
    }
    return s;
  }

  void equation(const Equation& eq, const Program& p, int indent) {
    if (source_lines && eq.site) comment_ = "  ; " + nx::ops::describe(eq.site);
    std::string head;
    for (std::size_t i = 0; i < eq.outputs.size(); ++i) {
      if (i) head += ", ";
      head += name(eq.outputs[i]) + " : " + type_text(p.types[std::size_t(eq.outputs[i])]);
    }
    head += " = ";
    switch (eq.kind) {
      case OpKind::constant: return line(indent, head + constant_text(eq.constant));
      case OpKind::primitive:
        if (nx::ops::is_elementwise(eq.prim)) return map(eq, p, head, indent);
        return line(indent, head + std::string(nx::ops::info(eq.prim).name) + "(" + names_of(eq.inputs) + ")" +
                                params_text(eq.params));
      case OpKind::linear_call: return line(indent, head + "pullback(" + names_of(eq.inputs) + ")");
      case OpKind::custom:
        line(indent, head + std::string(eq.code<CustomRule>()->name()) + "(" + names_of(eq.inputs) + ")");
        return program(*eq.programs[0], indent + 4);
      case OpKind::callback: return line(indent, head + "callback(" + names_of(eq.inputs) + ")");
      case OpKind::check:
        return line(indent, head + "check " + std::to_string(eq.code<CheckCall>()->condition_count) + " conditions (" +
                                names_of(eq.inputs) + ")");
      default: return construct(eq, head, indent);  // the constructs with text
    }
  }

  static std::string constant_text(const nx::Tensor& t) {
    const std::size_t size = nx::size_of(t.dtype());
    const char* data = nx::ops::data_of<char>(t);
    if (t.ndim() == 0)
      return "Map [" + std::string(nx::name(t.dtype())) + ":" + hex_bits(data, size) + "] at " +
             std::string(t.placement().name());
    std::string s = "constant [";
    for (std::int64_t i = 0; i < t.numel(); ++i) s += (i ? ", " : "") + hex_bits(data + i * std::int64_t(size), size);
    return s + "]";
  }

  void map(const Equation& eq, const Program& p, const std::string& head, int indent) {
    std::string op(nx::ops::info(eq.prim).name);
    if (eq.prim == Prim::convert) op += "<" + std::string(nx::name(eq.params.dtype)) + ">";
    std::string args, types, with;
    for (std::size_t i = 0; i < eq.inputs.size(); ++i) {
      std::string x(1, 'x');
      x += std::to_string(i);
      args += (i ? ", " : "") + x;
      types += " (" + x + ": " + type_text(p.types[std::size_t(eq.inputs[i])]) + ")";
      with += (i ? ", " : "") + x + " = " + name(eq.inputs[i]);
    }
    line(indent, head + "Map [" + op + "(" + args + ")]" + types);
    line(indent + 2, "with " + with);
  }

  // `<word> [<count> <unit>,] <group> (...), ...`, then each sub-program
  // under its name (ir/construct.hpp's TextForm).
  void construct(const Equation& eq, const std::string& head, int indent) {
    const ConstructRules& rules = construct_rules(eq.kind);
    const TextForm& form = *rules.text;
    std::string text = head + std::string(form.word);
    if (!form.unit.empty()) text += " " + std::to_string(rules.count(eq)) + " " + std::string(form.unit) + ",";
    std::size_t from = 0;
    const std::vector<int> sizes = rules.group_sizes(eq, eq.inputs.size());
    for (std::size_t g = 0; g < sizes.size(); ++g) {
      const auto to = from + std::size_t(sizes[g]);
      text += (g ? ", " : " ") + std::string(form.groups[g]) + " (" +
              names_of(std::vector<int>(eq.inputs.begin() + long(from), eq.inputs.begin() + long(to))) + ")";
      from = to;
    }
    line(indent, text);
    for (std::size_t j = 0; j < eq.programs.size(); ++j) {
      line(indent + 2, std::string(form.programs[std::min(j, form.programs.size() - 1)]));
      program(*eq.programs[j], indent + 4);
    }
  }
};

}  // namespace

ValueNumbers number_values(const Program& program) {
  ValueNumbers numbers;
  int next = 0;
  number(program, numbers, next);
  return numbers;
}

std::string print(const Program& program, bool source_lines) {
  Printer p;
  p.source_lines = source_lines;
  p.numbers = number_values(program);
  p.typed = typed_values(program);
  p.program(program, 0);
  return p.out;
}

namespace {
// A path in double quotes: backslash, quote and control characters escaped
// (parser.cpp's Cursor::quoted reads them back).
std::string quoted(std::string_view name) {
  std::string s = "\"";
  for (char c : name) {
    if (c == '\\' || c == '"') s += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      s += "\\x" + hex_bits(&c, 1).substr(2);
      continue;
    }
    s += c;
  }
  return s + '"';
}
}  // namespace

std::string print_with_header(const Program& program, const Names* names, bool source_lines) {
  std::string s = "rune program " + std::to_string(text_format) + "\n";
  if (names) {
    for (std::size_t k = 0; k < program.params.size(); ++k)
      s += "parameter " + quoted(names->params[k]) + " : " + type_text(program.types[std::size_t(program.params[k])]) + "\n";
    for (std::size_t k = 0; k < program.results.size(); ++k)
      s += "result " + quoted(names->results[k]) + " : " + type_text(program.types[std::size_t(program.results[k])]) + "\n";
  }
  return s + print(program, source_lines);
}

}  // namespace rune::ir
