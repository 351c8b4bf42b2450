#include "tools/repl/tensor_text.hpp"

#include <charconv>
#include <complex>
#include <stdexcept>
#include <string>

#include "rune/nx.hpp"

namespace rune::repl {

namespace {

// The C++ type an element is read as: its own type, but a float for the
// 16-bit floats (as the printer checks that its text reads back).
template <nx::DType D>
using reading_t = std::conditional_t<D == nx::float16 || D == nx::bfloat16, float, nx::element_t<D>>;

template <class T> struct is_complex : std::false_type {};
template <class F> struct is_complex<std::complex<F>> : std::true_type {};

constexpr std::size_t max_axes = 64;

std::string quoted(std::string_view s) {
  std::string out(1, '\'');  // (not "'" + ...: GCC 12 warns falsely on that)
  return out.append(s) + '\'';
}

template <class T> bool read_number(std::string_view token, T& out, bool& out_of_range) {
  auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), out);
  out_of_range = error == std::errc::result_out_of_range;
  return error == std::errc() && end == token.data() + token.size();
}

// "1-2.5j": the real part, then the signed imaginary part and 'j'; a real
// or an imaginary number alone is read too.
template <class F> bool read_complex(std::string_view token, std::complex<F>& out, bool& out_of_range) {
  if (token.empty() || token.back() != 'j') {
    F re{};
    bool ok = read_number(token, re, out_of_range);
    out = re;
    return ok;
  }
  std::size_t sign = token.find_last_of("+-", token.size() - 2);
  while (sign != std::string_view::npos && sign > 0 && (token[sign - 1] == 'e' || token[sign - 1] == 'E'))
    sign = token.find_last_of("+-", sign - 1);  // an exponent's sign, not the imaginary part's
  if (sign == std::string_view::npos) sign = 0;  // an imaginary number alone
  std::string_view imag = token.substr(sign, token.size() - 1 - sign);
  if (!imag.empty() && imag[0] == '+') imag.remove_prefix(1);
  F re{}, im{};
  bool re_range = false, im_range = false;
  bool ok = (sign == 0 || read_number(token.substr(0, sign), re, re_range)) && read_number(imag, im, im_range);
  out_of_range = re_range || im_range;
  out = {re, im};
  return ok;
}

template <class T> T read_element(std::string_view token, nx::DType dtype) {
  T value{};
  bool ok = false, out_of_range = false;
  if constexpr (std::is_same_v<T, bool>) {
    ok = token == "true" || token == "false";
    value = token == "true";
  } else if constexpr (is_complex<T>::value) {
    ok = read_complex(token, value, out_of_range);
  } else {
    ok = read_number(token, value, out_of_range);
  }
  if (out_of_range) throw std::invalid_argument(quoted(token) + " is out of range for " + std::string(nx::name(dtype)));
  if (!ok) throw std::invalid_argument(quoted(token) + " is not a valid " + std::string(nx::name(dtype)) + " element");
  return value;
}

}  // namespace

nx::Tensor tensor_of(nx::DType dtype, const nx::Shape& shape, const std::vector<std::string_view>& elements) {
  return nx::visit_dtype(dtype, [&](auto d) {
    using T = reading_t<decltype(d)::value>;
    std::vector<T> values;
    for (std::string_view element : elements) values.push_back(read_element<T>(element, dtype));
    return nx::create(dtype, shape, values);
  });
}

// (Element words are kept as text until the whole structure has been read
// against the shape.)
nx::Tensor TensorReader::tensor() {
  nx::DType dtype = read_dtype();
  shape_ = read_shape();
  std::vector<std::string_view> words;
  read_axis(0, words);
  return tensor_of(dtype, shape_, words);
}

bool TensorReader::at_end() {
  skip_spaces();
  return pos_ == text_.size();
}

bool TensorReader::accept(char c) {
  skip_spaces();
  if (pos_ == text_.size() || text_[pos_] != c) return false;
  ++pos_;
  return true;
}

void TensorReader::expected(const std::string& what) {
  throw std::invalid_argument("expected " + what + ", found " + found());
}

void TensorReader::skip_spaces() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
}

std::string_view TensorReader::token() {
  skip_spaces();
  std::size_t end = text_.find_first_of(" \t,[]", pos_);
  if (end == std::string_view::npos) end = text_.size();
  return text_.substr(pos_, end - pos_);
}

std::string_view TensorReader::word() {
  std::string_view w = token();
  pos_ += w.size();
  return w;
}

bool TensorReader::accept_word(std::string_view w) {
  if (token() != w) return false;
  pos_ += w.size();
  return true;
}

std::string TensorReader::found() {
  if (at_end()) return "the end of the line";
  std::string_view t = token();
  return quoted(t.empty() ? text_.substr(pos_, 1) : t);
}

nx::DType TensorReader::read_dtype() {
  std::string_view w = token();
  for (int i = 0; i < nx::dtype_count; ++i)
    if (nx::name(nx::DType(i)) == w) {
      pos_ += w.size();
      return nx::DType(i);
    }
  expected("a dtype (bool, int32, float64, ...)");
}

nx::Shape TensorReader::read_shape() {
  if (!accept('[')) expected("a shape such as [2, 3]");
  nx::Shape shape;
  if (accept(']')) return shape;
  do {
    std::string_view w = token();
    std::int64_t n = -1;
    bool out_of_range = false;
    if (!read_number(w, n, out_of_range) || n < 0) expected("a size in the shape");
    pos_ += w.size();
    shape.push_back(n);
    // (elements are read one recursion level per axis)
    if (shape.size() > max_axes) throw std::invalid_argument("a shape of more than 64 axes");
  } while (accept(','));
  if (!accept(']')) expected("',' or ']' in the shape");
  return shape;
}

void TensorReader::read_axis(std::size_t axis, std::vector<std::string_view>& words) {
  if (axis == shape_.size()) return words.push_back(element());
  if (!accept('[')) expected("'[' opening axis " + std::to_string(axis) + " of the shape " + nx::to_string(shape_));
  const std::int64_t n = shape_[axis];
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0 && !accept(',')) {
      if (accept(']')) entries_differ(axis, std::to_string(i));
      expected("','");
    }
    read_axis(axis + 1, words);
  }
  if (!accept(']')) {
    if (accept(',')) entries_differ(axis, "more");
    expected("']'");
  }
}

void TensorReader::entries_differ(std::size_t axis, const std::string& text_count) {
  throw std::invalid_argument("the shape " + nx::to_string(shape_) + " has " + std::to_string(shape_[axis]) +
                              " entries along axis " + std::to_string(axis) + ", the text " + text_count);
}

std::string_view TensorReader::element() {
  std::string_view t = token();
  if (t.substr(0, 3) == "...")
    throw std::invalid_argument("an elided tensor ('...') cannot be read back: write every element");
  if (t.empty()) expected("an element");
  pos_ += t.size();
  return t;
}

nx::Tensor parse_tensor(std::string_view text) {
  TensorReader in(text);
  nx::Tensor t = in.tensor();
  if (!in.at_end()) in.expected("the end of the tensor");
  return t;
}

}  // namespace rune::repl
