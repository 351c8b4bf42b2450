// Reading program text back: the inverse of printer.cpp. A cursor reads the
// tokens of the text line by line; a recursive-descent parser builds the
// program and checks names and types as it goes, so a text that parses is a
// well-typed program, numbered canonically (each program's parameters first,
// then each equation's outputs, in order).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/construct.hpp"
#include "ir/text.hpp"
#include "ir/trace.hpp"
#include "ops/concrete.hpp"
#include "ops/sizes.hpp"
#include "rune/program.hpp"

namespace rune::ir {

namespace {

using nx::ops::Family;
using nx::ops::info;
using nx::ops::is_elementwise;

struct Mark {
  int line, column;  // from 1
};

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }
std::string value_text(std::int64_t n) { return "%" + std::to_string(n); }
std::string count(std::size_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }
std::string type_text(const TensorType& t) {
  return std::string(nx::name(t.dtype)) + " " + nx::to_string(t.shape) + " at " + std::string(t.placement.name());
}

[[noreturn]] void fail_at(Mark m, const std::string& what) {
  throw std::invalid_argument("rune::parse_program: line " + std::to_string(m.line) + ", column " +
                              std::to_string(m.column) + ": " + what);
}

// The tokens of the text. Spaces between tokens are skipped but line ends
// are not: the format puts one equation on a line, so a line end is read
// explicitly (end_line), and blank lines after it are skipped. A comment,
// from `;` to the end of its line, is skipped as a space and kept by line
// (an equation's site: `; cloth.hpp:88`).
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
    if (!accept(c)) expected(in_quotes(std::string(1, c)));
  }
  bool accept_word(std::string_view w) {
    skip_spaces();
    if (word_length() != w.size() || text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void expect_word(std::string_view w) {
    if (!accept_word(w)) expected(in_quotes(w));
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
  int line() {
    skip_spaces();
    return line_;
  }
  // The comment of line `line`, without its `;` and spaces; empty: none.
  std::string_view comment_on(int line) const {
    auto found = comments_.find(line);
    return found == comments_.end() ? std::string_view() : found->second;
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
    if (v < 0) fail_at(m, "expected a size, found " + in_quotes(std::to_string(v)));
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
  // A name in double quotes: `\\`, `\"` and `\xHH` (two hex digits) are
  // escapes, as printer.cpp's quoted writes them.
  std::string quoted(const char* what) {
    if (!accept('"')) expected(what);
    std::string s;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
      char c = text_[pos_++];
      if (c == '\\') c = escaped();
      s += c;
    }
    if (pos_ == text_.size() || text_[pos_] != '"') expected("'\"' closing the name");
    ++pos_;
    return s;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0, line_start_ = 0;
  int line_ = 1;
  std::unordered_map<int, std::string_view> comments_;

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool starts_word(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool in_word(char c) { return starts_word(c) || is_digit(c); }
  static int hex(char c) { return is_digit(c) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10; }
  static bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

  // The character an escape in a quoted name stands for (the backslash read).
  char escaped() {
    if (pos_ < text_.size() && (text_[pos_] == '\\' || text_[pos_] == '"')) return text_[pos_++];
    if (pos_ + 2 < text_.size() && text_[pos_] == 'x' && is_hex(text_[pos_ + 1]) && is_hex(text_[pos_ + 2])) {
      pos_ += 3;
      return char(hex(text_[pos_ - 2]) * 16 + hex(text_[pos_ - 1]));
    }
    expected("an escape (\\\\, \\\" or \\xHH)");
  }

  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == ';') {
      const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
      std::string_view comment = text_.substr(pos_ + 1, end - pos_ - 1);
      while (!comment.empty() && std::isspace(static_cast<unsigned char>(comment.front()))) comment.remove_prefix(1);
      while (!comment.empty() && std::isspace(static_cast<unsigned char>(comment.back()))) comment.remove_suffix(1);
      comments_[line_] = comment;
      pos_ = end;
    }
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
    return in_quotes(text_.substr(pos_, n));
  }
};

// The site a comment `cloth.hpp:88` gives (ir::Equation::site); none for a
// comment of another form.
rune::detail::CallSite source_line(std::string_view comment) {
  const std::size_t colon = comment.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  unsigned line = 0;
  const char* first = comment.data() + colon + 1;
  const char* last = comment.data() + comment.size();
  auto [end, error] = std::from_chars(first, last, line);
  if (error != std::errc() || end != last || first == last) return {};
  const char* file = source_file(comment.substr(0, colon));
  return file ? rune::detail::CallSite{file, line} : rune::detail::CallSite{};
}

// The list parameters, by their name in the text.
constexpr std::pair<std::string_view, nx::Shape Params::*> list_params[] = {
    {"axes", &Params::axes},   {"shape", &Params::shape}, {"starts", &Params::starts}, {"stops", &Params::stops},
    {"steps", &Params::steps}, {"lo", &Params::lo},       {"hi", &Params::hi},
    {"interior", &Params::interior}};

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

struct Scope;

// An equation's parts as the text gives them, kept for the checks, which
// wait until every parameter's type is known.
struct Site {
  Mark op;
  std::vector<Decl> outputs;
  std::vector<Ref> operands;
  std::vector<std::pair<std::string_view, TensorType>> declared;  // a Map's operands: name and type
  std::vector<std::unique_ptr<Scope>> programs;                   // a construct's sub-programs
};

// One program being read. The text does not print parameter types: they
// are inferred once the whole text is read, from what declares them (Map
// operand types; across a scan, the scan's inputs and its step's
// parameters), or written `%n : type` in the program's parameter list.
struct Scope {
  Program program;  // its types are filled in when it is checked
  std::vector<std::optional<TensorType>> types;
  std::unordered_map<std::int64_t, int> values;  // by number in the text
  std::vector<std::pair<std::int64_t, Mark>> params;
  std::vector<Site> sites;  // one per equation
};

bool learn(std::optional<TensorType>& known, const std::optional<TensorType>& type) {
  if (known || !type) return false;
  known = type;
  return true;
}

// The input of a construct that gives a sub-program's parameter its type
// (ConstructRules::param_source), or -1.
int source_of(const Equation& eq, std::size_t program, std::size_t param, bool* row) {
  const int i = construct_rules(eq.kind).param_source(eq, program, param, row);
  return i < int(eq.inputs.size()) ? i : -1;
}

// A construct input's type as a parameter sees it (a row, when it takes one:
// none when the input has not `count` rows: the checks report that), and back.
std::optional<TensorType> as_param(std::optional<TensorType> t, bool row, std::int64_t count) {
  if (!t || !row) return t;
  if (t->shape.empty() || t->shape[0] != count) return std::nullopt;
  t->shape.erase(t->shape.begin());
  return t;
}
std::optional<TensorType> as_input(std::optional<TensorType> t, bool row, std::int64_t count) {
  if (t && row) t->shape.insert(t->shape.begin(), count);
  return t;
}

bool infer(Scope& s);

bool infer_across(Scope& s, const Equation& eq, const std::vector<std::unique_ptr<Scope>>& programs) {
  bool learned = false;
  const auto& rules = construct_rules(eq.kind);
  const std::int64_t count = rules.text->unit.empty() ? 0 : rules.count(eq);
  for (std::size_t j = 0; j < programs.size(); ++j) {
    Scope& sub = *programs[j];
    for (std::size_t k = 0; k < sub.program.params.size(); ++k) {
      bool row = false;
      const int i = source_of(eq, j, k, &row);
      if (i < 0) continue;
      auto& outer = s.types[std::size_t(eq.inputs[std::size_t(i)])];
      auto& inner = sub.types[std::size_t(sub.program.params[k])];
      learned = learn(inner, as_param(outer, row, count)) || learn(outer, as_input(inner, row, count)) || learned;
    }
    learned = infer(sub) || learned;
  }
  return learned;
}

// Spreads known types to parameters: from Map operand declarations, and
// both ways between a construct's inputs and its sub-programs' parameters. Gives
// whether it learned anything; read() repeats it until not.
bool infer(Scope& s) {
  bool learned = false;
  for (std::size_t i = 0; i < s.sites.size(); ++i) {
    const Site& site = s.sites[i];
    for (std::size_t k = 0; k < site.declared.size(); ++k)
      learned = learn(s.types[std::size_t(site.operands[k].value)], site.declared[k].second) || learned;
    if (!site.programs.empty()) learned = infer_across(s, s.program.equations[i], site.programs) || learned;
  }
  return learned;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : in_(text) {}

  Text read() {
    Text text;
    std::vector<Header> header = read_header(text);
    Scope top = program();
    if (!in_.at_line_end()) in_.expected("end of text");
    while (infer(top)) {
      // each round may show types that the next one spreads further
    }
    text.program = check(top);
    if (text.names) check_header(header, text.program, *text.names);
    return text;
  }

 private:
  Cursor in_;
  int depth_ = 0;  // sub-programs open around the one being read
  std::vector<std::int64_t> collected_;  // the totals of the collects around the program being read
  std::unordered_set<std::int64_t> names_;  // every number defined so far: the text numbers values once

  // ---- the header of a saved text

  // A `parameter` or `result` line: where it is and the type it gives.
  struct Header {
    Mark at;
    bool result;
    TensorType type;
  };

  // `rune program <format>`, then `parameter "<path>" : <type>` per
  // parameter and `result "<path>" : <type>` per result, or nothing (text
  // written before the header existed, or by to_string of a program
  // without names).
  std::vector<Header> read_header(Text& text) {
    std::vector<Header> lines;
    if (!in_.accept_word("rune")) return lines;
    in_.expect_word("program");
    const Mark at = in_.mark();
    const std::int64_t format = in_.integer();
    if (format != text_format)
      fail_at(at, "the text has format " + std::to_string(format) + "; this rune reads format " +
                      std::to_string(text_format));
    in_.end_line();
    for (;;) {
      const Mark line = in_.mark();
      const bool result = in_.accept_word("result");
      if (!result && !in_.accept_word("parameter")) break;
      if (!text.names) text.names.emplace();
      std::string name = in_.quoted("a path in double quotes");
      (result ? text.names->results : text.names->params).push_back(std::move(name));
      in_.expect(':');
      lines.push_back({line, result, read_type()});
      in_.end_line();
    }
    return lines;
  }

  // The header's parameters and results are the program's, in order.
  static void check_header(const std::vector<Header>& lines, const Program& p, const Names& names) {
    const Mark end = lines.back().at;
    if (names.params.size() != p.params.size())
      fail_at(end, "the header names " + count(names.params.size(), "parameter") + ", the program takes " +
                       std::to_string(p.params.size()));
    if (names.results.size() != p.results.size())
      fail_at(end, "the header names " + count(names.results.size(), "result") + ", the program returns " +
                       std::to_string(p.results.size()));
    std::size_t param = 0, result = 0;
    for (const Header& h : lines) {
      const std::size_t k = h.result ? result++ : param++;
      const TensorType& want = p.types[std::size_t(h.result ? p.results[k] : p.params[k])];
      if (h.type != want)
        fail_at(h.at, std::string(h.result ? "result " : "parameter ") + std::to_string(k) + " is " +
                          type_text(want) + " in the program, " + type_text(h.type) + " in the header");
    }
  }

  // ---- reading: syntax and names

  // `program (%a, ...)`, its equations, `return ...`.
  Scope program() {
    Scope s;
    in_.expect_word("program");
    in_.expect('(');
    if (!in_.accept(')')) {
      do program_param(s);
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
    return s;
  }

  // The printer writes `%n`; `%n : type` gives a type no use shows.
  void program_param(Scope& s) {
    Mark at = in_.mark();
    std::int64_t n = in_.value_name();
    claim(n, at);
    std::optional<TensorType> type;
    if (in_.accept(':')) type = read_type();
    s.params.emplace_back(n, at);
    s.program.params.push_back(add(s, n, type));
  }

  void claim(std::int64_t n, Mark at) {
    if (!names_.insert(n).second) fail_at(at, "redefinition of " + value_text(n));
  }
  static int add(Scope& s, std::int64_t n, const std::optional<TensorType>& type) {
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

  // `%a : type, ... = <form>`; each form reads through the end of its last line.
  void equation(Scope& s) {
    const int first_line = in_.line();
    Site site;
    if (!in_.accept('=')) {
      do site.outputs.push_back(declaration());
      while (in_.accept(','));
      in_.expect('=');
    }
    site.op = in_.mark();
    std::string_view form = in_.word("an operation");
    Equation eq;
    read_form(s, eq, site, form);
    eq.site = source_line(in_.comment_on(first_line));
    eq.inputs = indices(site.operands);
    for (const Decl& d : site.outputs) eq.outputs.push_back(add(s, d.name, d.type));
    s.program.equations.push_back(std::move(eq));
    s.sites.push_back(std::move(site));
  }

  void read_form(Scope& s, Equation& eq, Site& site, std::string_view form) {
    if (form == "Map") return map_form(s, eq, site);
    if (form == "constant") return constant_list(eq, site);
    if (auto kind = construct_named(form)) return construct_form(s, eq, site, *kind);
    call_form(s, eq, site, form);
  }

  Decl declaration() {
    Mark at = in_.mark();
    std::int64_t n = in_.value_name();
    claim(n, at);
    in_.expect(':');
    return {n, at, read_type()};
  }

  TensorType read_type() {
    TensorType t{read_dtype(), {}, nx::Placement::host()};
    Mark at = in_.mark();
    t.shape = list(true);
    if (auto problem = nx::ops::shape_problem(t.shape)) fail_at(at, "shape " + nx::to_string(t.shape) + " " + *problem);
    in_.expect_word("at");
    t.placement = placement();
    return t;
  }
  nx::DType read_dtype() {
    Mark at = in_.mark();
    return dtype_named(in_.word("a dtype"), at);
  }
  // take's and scatter_add's indices outside the axis: `mode=drop` (the
  // printer leaves out the default, clamp).
  nx::ops::IndexMode read_mode() {
    Mark at = in_.mark();
    std::string_view name = in_.word("an index mode");
    if (name == "clamp") return nx::ops::IndexMode::clamp;
    if (name == "drop") return nx::ops::IndexMode::drop;
    fail_at(at, "unknown index mode " + in_quotes(name) + " (expected clamp or drop)");
  }
  static nx::DType dtype_named(std::string_view name, Mark at) {
    try {
      return nx::dtype_from_name(name);
    } catch (const std::invalid_argument&) {
      fail_at(at, "unknown dtype " + in_quotes(name));
    }
  }
  nx::Placement placement() {
    Mark at = in_.mark();
    std::string_view name = in_.word("a placement");
    if (name != nx::Placement::host().name()) fail_at(at, "unknown placement " + in_quotes(name));
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

  // `Map [dtype:bits] at CPU`: a scalar constant.
  void scalar_constant(Equation& eq, nx::DType dtype) {
    eq.kind = OpKind::constant;
    eq.constant = nx::ops::make_tensor(dtype, {});
    in_.bits(nx::ops::data_of<char>(eq.constant), nx::size_of(dtype));
    in_.expect(']');
    in_.expect_word("at");
    placement();
    in_.end_line();
  }

  // `constant [0x.., ...]`: the elements of the declared type, in C order.
  void constant_list(Equation& eq, const Site& site) {
    if (site.outputs.size() != 1)
      fail_at(site.op, "a constant gives 1 value, " + std::to_string(site.outputs.size()) + " declared");
    const TensorType& t = site.outputs[0].type;
    const std::size_t size = nx::size_of(t.dtype), n = std::size_t(nx::numel(t.shape));
    if (n > in_.left()) fail_at(site.op, "the text is too short for the " + count(n, "element") + " of the constant");
    eq.kind = OpKind::constant;
    eq.constant = nx::ops::make_tensor(t.dtype, t.shape);
    in_.expect('[');
    for (std::size_t i = 0; i < n; ++i) {
      if (i) in_.expect(',');
      in_.bits(nx::ops::data_of<char>(eq.constant) + i * size, size);
    }
    in_.expect(']');
    in_.end_line();
  }

  static Prim primitive(std::string_view name, Mark at) {
    for (int i = 0; i < nx::ops::prim_count; ++i)
      if (info(Prim(i)).name == name) return Prim(i);
    fail_at(at, "unknown primitive " + in_quotes(name));
  }
  static void check_arity(Prim p, std::size_t n, Mark at) {
    int want = info(p).arity;
    if (want >= 0 && std::size_t(want) != n)
      fail_at(at, std::string(info(p).name) + " takes " + count(std::size_t(want), "operand") + ", given " +
                      std::to_string(n));
  }

  // `Map [dtype:bits] at CPU`, or `Map [prim(x0, ...)]` with the operands'
  // types and, on the next line, `with x0 = %a, ...`.
  void map_form(Scope& s, Equation& eq, Site& site) {
    in_.expect('[');
    Mark at = in_.mark();
    std::string_view name = in_.word("a primitive or a dtype");
    if (in_.accept(':')) return scalar_constant(eq, dtype_named(name, at));
    eq.prim = primitive(name, at);
    if (!is_elementwise(eq.prim)) fail_at(at, in_quotes(name) + " is not elementwise");
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
    map_operands(s, site, args);
  }

  void map_operands(const Scope& s, Site& site, const std::vector<std::string_view>& args) {
    for (std::string_view x : args) {
      in_.expect('(');
      in_.expect_word(x);
      in_.expect(':');
      site.declared.emplace_back(x, read_type());
      in_.expect(')');
    }
    in_.end_line();
    in_.expect_word("with");
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) in_.expect(',');
      in_.expect_word(args[i]);
      in_.expect('=');
      site.operands.push_back(use(s));
    }
    in_.end_line();
  }

  // `name(%a, ...) key=value ...`
  void call_form(const Scope& s, Equation& eq, Site& site, std::string_view name) {
    eq.prim = primitive(name, site.op);
    in_.expect('(');
    if (!in_.accept(')')) {
      site.operands = uses(s);
      in_.expect(')');
    }
    check_arity(eq.prim, site.operands.size(), site.op);
    while (!in_.at_line_end()) static_param(eq.params);
    if (info(eq.prim).family == Family::collective)
      fail_at(site.op, std::string(name) + " names map " + std::to_string(eq.params.axis) + process_local);
    in_.end_line();
  }

  // Why a text cannot name a rune::Total or a named map (rune::vmap(f, axis)).
  static constexpr const char* process_local =
      ", an object of the process that traced the program, which program text cannot name";

  void static_param(Params& p) {
    Mark at = in_.mark();
    std::string_view key = in_.word("a parameter");
    auto list_param = std::find_if(std::begin(list_params), std::end(list_params),
                                   [&](const auto& entry) { return entry.first == key; });
    bool listed = list_param != std::end(list_params);
    if (!listed && key != "dtype" && key != "value" && key != "axis" && key != "mode")
      fail_at(at, "unknown parameter " + in_quotes(key));
    in_.expect('=');
    if (listed) p.*(list_param->second) = list(false);
    if (key == "dtype") p.dtype = read_dtype();
    if (key == "value") in_.bits(&p.value, sizeof p.value);
    if (key == "axis") p.axis = in_.integer();
    if (key == "mode") p.mode = read_mode();
  }

  // `<word> [N <unit>,] <group> (...), ...`, then each sub-program under
  // its name (ir/construct.hpp's TextForm).
  void construct_form(const Scope& s, Equation& eq, Site& site, OpKind kind) {
    eq.kind = kind;
    const ConstructRules& rules = construct_rules(kind);
    const TextForm& form = *rules.text;
    std::int64_t count = 0;
    if (!form.unit.empty()) {
      count = in_.size();
      in_.expect_word(form.unit);
    }
    std::vector<int> sizes;
    for (std::size_t g = 0; g < form.groups.size(); ++g)
      sizes.push_back(group(s, form.groups[g], site.operands, g > 0 || !form.unit.empty()));
    rules.from_text(eq, count, sizes);
    if (adds_to_total(kind) && std::find(collected_.begin(), collected_.end(), count) == collected_.end())
      fail_at(site.op, std::string(form.word) + " adds to total " + std::to_string(count) + ", which no collect around it opens: total " +
                           std::to_string(count) + " is a rune::Total" + process_local);
    in_.end_line();
    if (depth_ == rune::max_nesting)
      fail_at(site.op, "sub-programs nest more than " + std::to_string(rune::max_nesting) + " deep");
    ++depth_;
    if (kind == OpKind::collect) collected_.push_back(count);
    // The first sub-program is required; the others are read while their
    // names follow (the construct's type rule checks their number).
    for (std::size_t j = 0; j < form.programs.size() || form.repeats; ++j) {
      const std::string_view name = form.programs[std::min(j, form.programs.size() - 1)];
      if (j == 0) in_.expect_word(name);
      else if (!in_.accept_word(name)) break;
      in_.end_line();
      site.programs.push_back(std::make_unique<Scope>(program()));
    }
    if (kind == OpKind::collect) collected_.pop_back();
    --depth_;
  }

  // `[,] part (%a, ...)`: appends the values to refs and gives their count.
  int group(const Scope& s, std::string_view part, std::vector<Ref>& refs, bool comma) {
    if (comma) in_.expect(',');
    in_.expect_word(part);
    in_.expect('(');
    if (in_.accept(')')) return 0;
    std::vector<Ref> more = uses(s);
    in_.expect(')');
    refs.insert(refs.end(), more.begin(), more.end());
    return int(more.size());
  }

  // ---- checking: types, in text order

  // Checks a program whose types are all inferred, and gives it (moved out of s).
  Program check(Scope& s) {
    for (std::size_t i = 0; i < s.params.size(); ++i)
      if (!s.types[std::size_t(s.program.params[i])]) {
        const std::string name = value_text(s.params[i].first);
        fail_at(s.params[i].second, "no use shows the type of " + name + "; write it as '" + name + " : <type>'");
      }
    for (std::size_t i = 0; i < s.sites.size(); ++i) check_equation(s, s.program.equations[i], s.sites[i]);
    for (const auto& t : s.types) s.program.types.push_back(*t);
    return std::move(s.program);
  }

  void check_equation(const Scope& s, Equation& eq, Site& site) {
    std::vector<TensorType> in;
    for (std::size_t k = 0; k < site.operands.size(); ++k) {
      const Ref& r = site.operands[k];
      in.push_back(*s.types[std::size_t(r.value)]);
      if (k < site.declared.size() && in[k] != site.declared[k].second)
        fail_at(r.at, value_text(r.name) + " is " + type_text(in[k]) + ", " + std::string(site.declared[k].first) +
                          " is declared " + type_text(site.declared[k].second));
    }
    std::vector<TensorType> given;
    switch (eq.kind) {
      case OpKind::constant: given = {nx::ops::type_of(eq.constant)}; break;
      case OpKind::primitive: given = {primitive_type(eq, in, site.op)}; break;
      default: given = construct_types(eq, site, in); break;
    }
    check_outputs(site.outputs, given, site.op);
  }

  static void check_outputs(const std::vector<Decl>& outs, const std::vector<TensorType>& given, Mark op) {
    if (given.size() != outs.size())
      fail_at(op,
              "the equation gives " + count(given.size(), "value") + ", " + std::to_string(outs.size()) + " declared");
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (outs[i].type != given[i])
        fail_at(outs[i].at, value_text(outs[i].name) + " is declared " + type_text(outs[i].type) +
                                ", the equation gives " + type_text(given[i]));
  }

  static TensorType primitive_type(const Equation& eq, const std::vector<TensorType>& in, Mark op) {
    std::vector<nx::Tensor> handles;
    for (const TensorType& t : in) handles.push_back(type_only(t));
    if (!handles.empty()) check_axes(eq, handles[0], op);
    try {
      return nx::ops::result_type(eq.prim, handles, eq.params);
    } catch (const std::invalid_argument& e) {
      fail_at(op, e.what());
    }
  }

  // The reduce and arg rules take their axes as the nx functions normalized
  // them (sorted, distinct, in range); text is not normalized, so check here.
  static void check_axes(const Equation& eq, const nx::Tensor& x, Mark op) {
    const Family f = info(eq.prim).family;
    if (f != Family::reduce && f != Family::arg) return;
    const nx::Axes axes = f == Family::arg ? nx::Axes{eq.params.axis} : eq.params.axes;
    for (std::size_t i = 0; i < axes.size(); ++i)
      if (axes[i] < 0 || axes[i] >= x.ndim() || (i && axes[i] <= axes[i - 1]))
        fail_at(op, std::string(info(eq.prim).api) + ": axes " + nx::to_string(axes) +
                        " are not sorted, distinct axes of " + nx::ops::describe(x));
  }

  // Checks the sub-programs (which need the construct's inputs to fit them)
  // and gives the construct's output types.
  std::vector<TensorType> construct_types(Equation& eq, Site& site, const std::vector<TensorType>& in) {
    const ConstructRules& rules = construct_rules(eq.kind);
    const TextForm& form = *rules.text;
    for (std::size_t j = 0; j < site.programs.size(); ++j) {
      const std::size_t params = site.programs[j]->params.size();
      for (std::size_t k = 0; k < params; ++k) {
        bool row = false;
        const int i = rules.param_source(eq, j, k, &row);
        if (i >= int(in.size()))
          fail_at(site.op, "the " + std::string(form.programs[std::min(j, form.programs.size() - 1)]) + " takes " +
                               count(params, "value") + ", the " + std::string(form.word) + " gives " +
                               std::to_string(in.size()));
        if (i >= 0 && row && (in[std::size_t(i)].shape.empty() || in[std::size_t(i)].shape[0] != rules.count(eq))) {
          const Ref& r = site.operands[std::size_t(i)];
          fail_at(r.at, value_text(r.name) + " is " + type_text(in[std::size_t(i)]) + ", not " +
                            count(std::size_t(rules.count(eq)), "row"));
        }
      }
    }
    for (auto& sub : site.programs) eq.programs.push_back(std::make_shared<const Program>(check(*sub)));
    try {
      return construct_output_types(eq, in);
    } catch (const std::invalid_argument& e) {
      fail_at(site.op, e.what());
    }
  }
};

}  // namespace

Text parse_text(std::string_view text) { return Parser(text).read(); }

Program parse(std::string_view text) { return parse_text(text).program; }

}  // namespace rune::ir
