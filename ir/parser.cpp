// Reading program text back: the inverse of printer.cpp. A cursor reads the
// tokens of the text line by line; a recursive-descent parser builds the
// program and checks names and types as it goes, so a text that parses is a
// well-typed program, numbered canonically (each program's parameters first,
// then each equation's outputs, in order).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/text.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"

namespace rune::ir {

namespace {

using nx::ops::Family;
using nx::ops::info;

struct Mark {
  int line, column;  // from 1
};

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }
std::string value_text(std::int64_t n) { return "%" + std::to_string(n); }
std::string count(std::size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}
std::string type_text(const TensorType& t) {
  return std::string(nx::name(t.dtype)) + " " + nx::to_string(t.shape) + " at " + std::string(t.placement.name());
}

[[noreturn]] void fail_at(Mark m, const std::string& what) {
  throw std::invalid_argument("rune::parse_program: line " + std::to_string(m.line) + ", column " +
                              std::to_string(m.column) + ": " + what);
}

// The tokens of the text. Spaces between tokens are skipped but line ends
// are not: the format puts one equation on a line, so a line end is read
// explicitly (end_line), and blank lines after it are skipped.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) { skip_blank_lines(); }

  Mark mark() {
    skip_spaces();
    return {line_, int(pos_ - line_start_) + 1};
  }
  [[noreturn]] void expected(const std::string& what) {
    Mark m = mark();
    fail_at(m, "expected " + what + ", found " + found());
  }

  bool at(char c) {
    skip_spaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool at_line_end() { return at('\n') || pos_ == text_.size(); }
  bool accept(char c) { return at(c) ? (++pos_, true) : false; }
  void expect(char c) {
    if (!accept(c)) expected(quoted(std::string(1, c)));
  }
  bool accept_word(std::string_view w) {
    skip_spaces();
    if (word_length() != w.size() || text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void expect_word(std::string_view w) {
    if (!accept_word(w)) expected(quoted(w));
  }
  std::string_view word(const char* what) {
    skip_spaces();
    std::size_t n = word_length();
    if (n == 0) expected(what);
    pos_ += n;
    return text_.substr(pos_ - n, n);
  }
  void end_line() {
    if (!at_line_end()) expected("end of line");
    skip_blank_lines();
  }

  std::int64_t integer() {
    Mark m = mark();
    std::int64_t v = 0;
    const char* first = text_.data() + pos_;
    auto [end, error] = std::from_chars(first, text_.data() + text_.size(), v);
    if (error == std::errc::result_out_of_range) fail_at(m, "number out of range: " + found());
    if (error != std::errc()) expected("an integer");
    pos_ += std::size_t(end - first);
    return v;
  }
  std::int64_t size() {
    Mark m = mark();
    std::int64_t v = integer();
    if (v < 0) fail_at(m, "expected a size, found " + quoted(std::to_string(v)));
    return v;
  }
  std::int64_t value_name() {
    skip_spaces();
    if (pos_ + 1 >= text_.size() || text_[pos_] != '%' || !is_digit(text_[pos_ + 1])) expected("a value (%n)");
    ++pos_;
    return integer();
  }
  // `0x` and the bytes of one element, most significant first; stored in
  // memory order (little-endian), as printer.cpp's hex_bits reads them.
  void bits(void* dst, std::size_t size) {
    skip_spaces();
    std::size_t n = 0;
    if (text_.substr(pos_, 2) == "0x")
      while (pos_ + 2 + n < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_ + 2 + n]))) ++n;
    if (n != 2 * size) expected("0x and " + std::to_string(2 * size) + " hex digits");
    auto* out = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < size; ++i)
      out[size - 1 - i] = static_cast<unsigned char>(hex(text_[pos_ + 2 + 2 * i]) * 16 + hex(text_[pos_ + 3 + 2 * i]));
    pos_ += 2 + n;
  }
  std::size_t left() const { return text_.size() - pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0, line_start_ = 0;
  int line_ = 1;

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool starts_word(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool in_word(char c) { return starts_word(c) || is_digit(c); }
  static int hex(char c) { return is_digit(c) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10; }

  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  void skip_blank_lines() {
    while (at('\n')) {
      line_start_ = ++pos_;
      ++line_;
    }
  }
  std::size_t word_length() const {
    std::size_t n = 0;
    if (pos_ < text_.size() && starts_word(text_[pos_]))
      while (pos_ + n < text_.size() && in_word(text_[pos_ + n])) ++n;
    return n;
  }
  // What the token here is, for "expected ..., found ..." (spaces skipped).
  std::string found() const {
    if (pos_ == text_.size()) return "end of text";
    if (text_[pos_] == '\n') return "end of line";
    auto in_token = [](char c) { return in_word(c) || (c && std::strchr("%-.", c)); };
    std::size_t n = 1;
    if (in_token(text_[pos_]))
      while (pos_ + n < text_.size() && in_token(text_[pos_ + n])) ++n;
    return quoted(text_.substr(pos_, n));
  }
};

bool is_elementwise(Prim p) {
  Family f = info(p).family;
  return f == Family::unary || f == Family::binary || f == Family::select || f == Family::convert;
}

// How many operands a primitive takes; -1 for any number (concatenate).
int arity(Prim p) {
  switch (info(p).family) {
    case Family::binary:
    case Family::linalg: return 2;
    case Family::select: return 3;
    case Family::layout:
      if (p == Prim::concatenate) return -1;
      if (p == Prim::take || p == Prim::dynamic_slice) return 2;
      return p == Prim::dynamic_update_slice ? 3 : 1;
    default: return 1;
  }
}

// The list parameters, by their name in the text.
constexpr std::pair<std::string_view, nx::Shape Params::*> list_params[] = {
    {"axes", &Params::axes}, {"shape", &Params::shape}, {"starts", &Params::starts}, {"stops", &Params::stops},
    {"steps", &Params::steps}, {"lo", &Params::lo},     {"hi", &Params::hi}};

// A use of a value: its index in the program, its number in the text.
struct Ref {
  int value;
  std::int64_t name;
  Mark at;
};
// An output as its equation declares it.
struct Decl {
  std::int64_t name;
  Mark at;
  TensorType type;
};
// A primitive equation whose check waits for the type of a parameter.
struct Pending {
  std::size_t equation;
  Mark op;
  std::vector<Decl> outputs;
};

// One program being read. The text does not print parameter types, so a
// parameter's type stays unknown until a use shows it: a Map operand's
// declaration, or a scan step's parameter. Checks of primitives that read a
// parameter of unknown type wait for the end of the program.
struct Scope {
  Program program;
  std::vector<std::optional<TensorType>> types;
  std::unordered_map<std::int64_t, int> values;  // by number in the text
  std::vector<std::pair<std::int64_t, Mark>> param_names;  // for errors
  std::vector<Pending> pending;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : in_(text) {}

  Program read() {
    Program p = program({});
    if (!in_.at_line_end()) in_.expected("end of text");
    return p;
  }

 private:
  Cursor in_;
  std::unordered_set<std::int64_t> names_;  // every number defined so far: the text numbers values once

  // `program (%a, ...)`, its equations, `return ...`; `given` holds the
  // parameter types a scan gives its step.
  Program program(const std::vector<std::optional<TensorType>>& given) {
    Scope s;
    in_.expect_word("program");
    in_.expect('(');
    if (!in_.accept(')')) {
      do param(s, given);
      while (in_.accept(','));
      in_.expect(')');
    }
    in_.end_line();
    while (!in_.accept_word("return")) {
      if (!in_.at('%') && !in_.at('=')) in_.expected("an equation or 'return'");
      equation(s);
    }
    if (!in_.at_line_end()) s.program.results = indices(uses(s));
    in_.end_line();
    return finish(std::move(s));
  }

  // A parameter may be written `%n : type` (the printer does not): that
  // gives the type of a parameter whose uses do not show it.
  void param(Scope& s, const std::vector<std::optional<TensorType>>& given) {
    Mark at = in_.mark();
    std::int64_t n = in_.value_name();
    claim(n, at);
    std::optional<TensorType> type;
    if (s.param_names.size() < given.size()) type = given[s.param_names.size()];
    if (in_.accept(':')) {
      TensorType written = read_type();
      if (type && *type != written)
        fail_at(at, value_text(n) + " is declared " + type_text(written) + ", the scan gives " + type_text(*type));
      type = written;
    }
    s.param_names.emplace_back(n, at);
    s.program.params.push_back(add(s, n, type));
  }

  Program finish(Scope s) {
    for (std::size_t i = 0; i < s.param_names.size(); ++i)
      if (!s.types[std::size_t(s.program.params[i])]) {
        const std::string name = value_text(s.param_names[i].first);
        fail_at(s.param_names[i].second, "no use shows the type of " + name + "; write it as '" + name + " : <type>'");
      }
    for (const Pending& p : s.pending)
      check_outputs(p.outputs, *primitive_type(s, s.program.equations[p.equation], p.op), p.op);
    for (const auto& t : s.types) s.program.types.push_back(*t);
    return std::move(s.program);
  }

  void claim(std::int64_t n, Mark at) {
    if (!names_.insert(n).second) fail_at(at, "redefinition of " + value_text(n));
  }
  int add(Scope& s, std::int64_t n, const std::optional<TensorType>& type) {
    s.values[n] = int(s.types.size());
    s.types.push_back(type);
    return int(s.types.size()) - 1;
  }
  Ref use(const Scope& s) {
    Mark at = in_.mark();
    std::int64_t n = in_.value_name();
    auto found = s.values.find(n);
    if (found != s.values.end()) return {found->second, n, at};
    if (names_.count(n)) fail_at(at, value_text(n) + " is not defined in this program before this use");
    fail_at(at, "undefined value " + value_text(n));
  }
  std::vector<Ref> uses(const Scope& s) {
    std::vector<Ref> refs;
    do refs.push_back(use(s));
    while (in_.accept(','));
    return refs;
  }
  static std::vector<int> indices(const std::vector<Ref>& refs) {
    std::vector<int> v;
    for (const Ref& r : refs) v.push_back(r.value);
    return v;
  }
  // A use that declares the value's type: it must agree with what is known,
  // or it shows the type of a parameter.
  void settle(Scope& s, const Ref& r, const TensorType& type, std::string_view what) {
    auto& known = s.types[std::size_t(r.value)];
    if (!known) known = type;
    if (*known != type)
      fail_at(r.at, value_text(r.name) + " is " + type_text(*known) + ", " + std::string(what) +
                                " is declared " + type_text(type));
  }

  // `%a : type, ... = <form>`; each form reads through the end of its last line.
  void equation(Scope& s) {
    std::vector<Decl> outs;
    if (!in_.accept('=')) {
      do outs.push_back(declaration());
      while (in_.accept(','));
      in_.expect('=');
    }
    Mark op = in_.mark();
    std::string_view form = in_.word("an operation");
    Equation eq;
    std::optional<std::vector<TensorType>> given;
    if (form == "Map") given = map_form(s, eq);
    else if (form == "constant") given = constant_list(eq, outs, op);
    else if (form == "scan") given = scan_form(s, eq, op);
    else given = call_form(s, eq, form, op);
    if (given) check_outputs(outs, *given, op);
    else s.pending.push_back({s.program.equations.size(), op, outs});
    for (const Decl& d : outs) eq.outputs.push_back(add(s, d.name, d.type));
    s.program.equations.push_back(std::move(eq));
  }

  Decl declaration() {
    Mark at = in_.mark();
    std::int64_t n = in_.value_name();
    claim(n, at);
    in_.expect(':');
    return {n, at, read_type()};
  }

  void check_outputs(const std::vector<Decl>& outs, const std::vector<TensorType>& given, Mark op) {
    if (given.size() != outs.size())
      fail_at(op, "the equation gives " + count(given.size(), "value") + ", " +
                              std::to_string(outs.size()) + " declared");
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (outs[i].type != given[i])
        fail_at(outs[i].at, value_text(outs[i].name) + " is declared " + type_text(outs[i].type) +
                                        ", the equation gives " + type_text(given[i]));
  }

  // ---- types

  TensorType read_type() {
    TensorType t{read_dtype(), {}, nx::Placement::host()};
    t.shape = list(true);
    in_.expect_word("at");
    t.placement = placement();
    return t;
  }
  nx::DType read_dtype() {
    Mark at = in_.mark();
    return dtype_named(in_.word("a dtype"), at);
  }
  nx::DType dtype_named(std::string_view name, Mark at) {
    try {
      return nx::dtype_from_name(name);
    } catch (const std::invalid_argument&) {
      fail_at(at, "unknown dtype " + quoted(name));
    }
  }
  nx::Placement placement() {
    Mark at = in_.mark();
    std::string_view name = in_.word("a placement");
    if (name != nx::Placement::host().name()) fail_at(at, "unknown placement " + quoted(name));
    return nx::Placement::host();
  }
  nx::Shape list(bool sizes) {
    nx::Shape v;
    in_.expect('[');
    if (in_.accept(']')) return v;
    do v.push_back(sizes ? in_.size() : in_.integer());
    while (in_.accept(','));
    in_.expect(']');
    return v;
  }

  // ---- constants

  std::vector<TensorType> scalar_constant(Equation& eq, nx::DType dtype) {
    eq.kind = OpKind::constant;
    eq.constant = nx::ops::make_tensor(dtype, {});
    in_.bits(nx::ops::data_of<char>(eq.constant), nx::size_of(dtype));
    in_.expect(']');
    in_.expect_word("at");
    placement();
    in_.end_line();
    return {nx::ops::type_of(eq.constant)};
  }

  // `constant [0x.., ...]`: the elements of the declared type, in C order.
  std::vector<TensorType> constant_list(Equation& eq, const std::vector<Decl>& outs, Mark op) {
    if (outs.size() != 1) fail_at(op, "a constant gives 1 value, " + std::to_string(outs.size()) + " declared");
    const TensorType& t = outs[0].type;
    const std::size_t size = nx::size_of(t.dtype), n = std::size_t(nx::numel(t.shape));
    if (n > in_.left()) fail_at(op, "the text is too short for the " + count(n, "element") + " of the constant");
    eq.kind = OpKind::constant;
    eq.constant = nx::ops::make_tensor(t.dtype, t.shape);
    in_.expect('[');
    for (std::size_t i = 0; i < n; ++i) {
      if (i) in_.expect(',');
      in_.bits(nx::ops::data_of<char>(eq.constant) + i * size, size);
    }
    in_.expect(']');
    in_.end_line();
    return {nx::ops::type_of(eq.constant)};
  }

  // ---- primitives

  Prim primitive(std::string_view name, Mark at) {
    for (int i = 0; i < nx::ops::prim_count; ++i)
      if (info(Prim(i)).name == name) return Prim(i);
    fail_at(at, "unknown primitive " + quoted(name));
  }
  void check_arity(Prim p, std::size_t n, Mark at) {
    int want = arity(p);
    if (want >= 0 && std::size_t(want) != n)
      fail_at(at, std::string(info(p).name) + " takes " + count(std::size_t(want), "operand") + ", given " +
                              std::to_string(n));
  }

  // `Map [dtype:bits] at CPU` (a scalar constant), or `Map [prim(x0, ...)]`
  // with the operands' types and, on the next line, `with x0 = %a, ...`.
  std::vector<TensorType> map_form(Scope& s, Equation& eq) {
    in_.expect('[');
    Mark at = in_.mark();
    std::string_view name = in_.word("a primitive or a dtype");
    if (in_.accept(':')) return scalar_constant(eq, dtype_named(name, at));
    eq.prim = primitive(name, at);
    if (!is_elementwise(eq.prim)) fail_at(at, quoted(name) + " is not elementwise");
    if (eq.prim == Prim::convert) {
      in_.expect('<');
      eq.params.dtype = read_dtype();
      in_.expect('>');
    }
    in_.expect('(');
    std::vector<std::string_view> args;
    if (!in_.accept(')')) {
      do args.push_back(in_.word("an operand name"));
      while (in_.accept(','));
      in_.expect(')');
    }
    in_.expect(']');
    check_arity(eq.prim, args.size(), at);
    map_operands(s, eq, args);
    return *primitive_type(s, eq, at);
  }

  void map_operands(Scope& s, Equation& eq, const std::vector<std::string_view>& args) {
    std::vector<TensorType> types;
    for (std::string_view x : args) {
      in_.expect('(');
      in_.expect_word(x);
      in_.expect(':');
      types.push_back(read_type());
      in_.expect(')');
    }
    in_.end_line();
    in_.expect_word("with");
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) in_.expect(',');
      in_.expect_word(args[i]);
      in_.expect('=');
      Ref r = use(s);
      settle(s, r, types[i], args[i]);
      eq.inputs.push_back(r.value);
    }
    in_.end_line();
  }

  // `name(%a, ...) key=value ...`; its check waits when an operand's type
  // is not known yet.
  std::optional<std::vector<TensorType>> call_form(Scope& s, Equation& eq, std::string_view name, Mark op) {
    eq.prim = primitive(name, op);
    in_.expect('(');
    if (!in_.accept(')')) {
      eq.inputs = indices(uses(s));
      in_.expect(')');
    }
    check_arity(eq.prim, eq.inputs.size(), op);
    while (!in_.at_line_end()) param(eq.params);
    in_.end_line();
    return primitive_type(s, eq, op);
  }

  void param(Params& p) {
    Mark at = in_.mark();
    std::string_view key = in_.word("a parameter");
    auto list_param = std::find_if(std::begin(list_params), std::end(list_params),
                                   [&](const auto& entry) { return entry.first == key; });
    bool listed = list_param != std::end(list_params);
    if (!listed && key != "dtype" && key != "value" && key != "axis")
      fail_at(at, "unknown parameter " + quoted(key));
    in_.expect('=');
    if (listed) p.*(list_param->second) = list(false);
    else if (key == "dtype") p.dtype = read_dtype();
    else if (key == "value") in_.bits(&p.value, sizeof p.value);
    else p.axis = in_.integer();
  }

  // The type rule's result over the operands' types; nullopt while one is unknown.
  std::optional<std::vector<TensorType>> primitive_type(const Scope& s, const Equation& eq, Mark op) {
    std::vector<nx::Tensor> handles;
    for (int v : eq.inputs) {
      if (!s.types[std::size_t(v)]) return std::nullopt;
      handles.push_back(type_only(*s.types[std::size_t(v)]));
    }
    if (!handles.empty()) check_axes(eq, handles[0], op);
    try {
      return std::vector{nx::ops::rules(eq.prim).type(eq.prim, handles, eq.params)};
    } catch (const std::invalid_argument& e) {
      fail_at(op, e.what());
    }
  }

  // The reduce and arg rules take their axes as the nx functions normalized
  // them (sorted, distinct, in range); text is not normalized, so check here.
  void check_axes(const Equation& eq, const nx::Tensor& x, Mark op) {
    const Family f = info(eq.prim).family;
    if (f != Family::reduce && f != Family::arg) return;
    const nx::Axes axes = f == Family::arg ? nx::Axes{eq.params.axis} : eq.params.axes;
    for (std::size_t i = 0; i < axes.size(); ++i)
      if (axes[i] < 0 || axes[i] >= x.ndim() || (i && axes[i] <= axes[i - 1]))
        fail_at(op, std::string(info(eq.prim).api) + ": axes " + nx::to_string(axes) +
                                " are not sorted, distinct axes of " + nx::ops::describe(x));
  }

  // ---- scan

  // `scan N rows, init (...), xs (...), captures (...)`, then a `step` line
  // and the step program.
  std::vector<TensorType> scan_form(Scope& s, Equation& eq, Mark op) {
    eq.kind = OpKind::scan;
    eq.scan.length = in_.size();
    in_.expect_word("rows");
    std::vector<Ref> refs;
    eq.scan.carry_count = group(s, "init", refs);
    eq.scan.xs_count = group(s, "xs", refs);
    group(s, "captures", refs);
    eq.inputs = indices(refs);
    in_.end_line();
    in_.expect_word("step");
    in_.end_line();
    eq.programs.push_back(std::make_shared<const Program>(program(step_types(s, eq, refs))));
    return scan_types(s, eq, refs, op);
  }

  // `, part (%a, ...)`: appends the values to refs and gives their count.
  int group(const Scope& s, std::string_view part, std::vector<Ref>& refs) {
    in_.expect(',');
    in_.expect_word(part);
    in_.expect('(');
    if (in_.accept(')')) return 0;
    std::vector<Ref> more = uses(s);
    in_.expect(')');
    refs.insert(refs.end(), more.begin(), more.end());
    return int(more.size());
  }

  static bool is_xs(const Equation& eq, std::size_t i) {
    return int(i) >= eq.scan.carry_count && int(i) < eq.scan.carry_count + eq.scan.xs_count;
  }

  // The step's parameter types from the scan's inputs: a row of each xs.
  std::vector<std::optional<TensorType>> step_types(const Scope& s, const Equation& eq, const std::vector<Ref>& refs) {
    std::vector<std::optional<TensorType>> types;
    for (std::size_t i = 0; i < refs.size(); ++i) {
      std::optional<TensorType> t = s.types[std::size_t(refs[i].value)];
      if (t && is_xs(eq, i)) {
        if (t->shape.empty() || t->shape[0] != eq.scan.length)
          fail_at(refs[i].at, value_text(refs[i].name) + " is " + type_text(*t) + ", not " +
                                  count(std::size_t(eq.scan.length), "row"));
        t->shape.erase(t->shape.begin());
      }
      types.push_back(t);
    }
    return types;
  }

  // The scan's output types; an input of unknown type (a parameter) takes
  // the type its step parameter shows.
  std::vector<TensorType> scan_types(Scope& s, const Equation& eq, const std::vector<Ref>& refs, Mark op) {
    const Program& step = *eq.programs[0];
    if (step.params.size() != refs.size())
      fail_at(op, "the step takes " + count(step.params.size(), "value") + ", the scan gives " +
                      std::to_string(refs.size()));
    std::vector<TensorType> inputs;
    for (std::size_t i = 0; i < refs.size(); ++i) {
      auto& known = s.types[std::size_t(refs[i].value)];
      if (!known) {
        known = step.types[std::size_t(step.params[i])];
        if (is_xs(eq, i)) known->shape.insert(known->shape.begin(), eq.scan.length);
      }
      inputs.push_back(*known);
    }
    try {
      return construct_output_types(eq, inputs);
    } catch (const std::invalid_argument& e) {
      fail_at(op, e.what());
    }
  }
};

}  // namespace

Program parse(std::string_view text) { return Parser(text).read(); }

}  // namespace rune::ir
