#include "tools/repl/arguments.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

#include "rune/nx.hpp"
#include "tools/repl/file_text.hpp"
#include "tools/repl/tensor_text.hpp"

namespace rune::repl {

namespace {

// Runs `f`, adding `before` and `after` to the message of the user's error
// it throws.
template <class F> auto reworded(const std::string& before, const std::string& after, F f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(before + e.what() + after);
  }
}

std::string argument_text(std::size_t i) { return "argument " + std::to_string(i) + ": "; }

// The type a shorthand names, after its own words: "float64 [3]".
struct Type {
  nx::DType dtype;
  nx::Shape shape;
};
Type read_type(TensorReader& in) {
  const nx::DType dtype = in.read_dtype();
  return {dtype, in.read_shape()};
}

// A shorthand's argument: `element` (a 0-d tensor of the dtype) seen at
// every index, and its value.
Argument shorthand(const Type& type, const nx::Tensor& element, std::function<nx::Tensor()> make) {
  return {nx::broadcast_to(element, type.shape), std::move(make)};
}

// zeros, ones: the same for every type.
using Filled = nx::Tensor (*)(nx::DType, const nx::Shape&);
Argument filled(const Type& type, Filled make) {
  return shorthand(type, make(type.dtype, {}), [type, make] { return make(type.dtype, type.shape); });
}

double read_double(TensorReader& in) {
  const std::string_view word = in.word();
  double value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || error != std::errc() || end != word.data() + word.size())
    throw std::invalid_argument("'" + std::string(word) + "' is not a number");
  return value;
}

// The element words of an argument file (see arguments.hpp).
std::vector<std::string_view> file_elements(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '#') {
      i = text.find('\n', i);
      if (i == std::string_view::npos) break;
    } else if (std::string_view(" \t\r\n,").find(text[i]) != std::string_view::npos) {
      ++i;
    } else {
      const std::size_t end = std::min(text.find_first_of(" \t\r\n,#", i), text.size());
      out.push_back(text.substr(i, end - i));
      i = end;
    }
  }
  return out;
}

nx::Tensor from_file(const std::string& path, const Type& type) {
  const std::string text = file_text(path);
  const std::vector<std::string_view> elements = file_elements(text);
  const std::size_t count = std::size_t(nx::numel(type.shape));
  if (elements.size() != count)
    throw std::invalid_argument(path + " holds " + std::to_string(elements.size()) + " elements, " +
                                std::string(nx::name(type.dtype)) + " " + nx::to_string(type.shape) + " has " +
                                std::to_string(count));
  return reworded(path + ": ", "", [&] { return tensor_of(type.dtype, type.shape, elements); });
}

Argument fill(TensorReader& in) {
  const std::string element(in.word());
  const Type type = read_type(in);
  return shorthand(type, tensor_of(type.dtype, {}, {element}), [type, element] {
    const std::vector<std::string_view> every(std::size_t(nx::numel(type.shape)), element);
    return tensor_of(type.dtype, type.shape, every);
  });
}

Argument linspace(TensorReader& in) {
  const double start = read_double(in), stop = read_double(in);
  const Type type = read_type(in);
  return shorthand(type, nx::scalar(type.dtype, start), [type, start, stop] {
    return nx::reshape(nx::linspace(type.dtype, start, stop, nx::numel(type.shape)), type.shape);
  });
}

Argument file(TensorReader& in) {
  const std::string path(in.word());
  const Type type = read_type(in);
  return shorthand(type, nx::zeros(type.dtype, {}), [path, type] { return from_file(path, type); });
}

struct Shorthand {
  std::string_view word, usage;
  Argument (*read)(TensorReader&);  // the words after `word`
};
const Shorthand shorthands[] = {
    {"zeros", "zeros DTYPE [SHAPE]", [](TensorReader& in) { return filled(read_type(in), nx::zeros); }},
    {"ones", "ones DTYPE [SHAPE]", [](TensorReader& in) { return filled(read_type(in), nx::ones); }},
    {"fill", "fill ELEMENT DTYPE [SHAPE], such as fill 2.5 float64 [3]", fill},
    {"linspace", "linspace START STOP DTYPE [SHAPE], such as linspace 0 1 float64 [5]", linspace},
    {"file", "file NAME DTYPE [SHAPE], such as file pos.txt float64 [100, 3]", file},
};

Argument read_argument(TensorReader& in) {
  for (const Shorthand& s : shorthands)
    if (in.accept_word(s.word)) return reworded("", " (" + std::string(s.usage) + ")", [&] { return s.read(in); });
  nx::Tensor t = in.tensor();
  return {t, [t] { return t; }};
}

}  // namespace

std::vector<Argument> parse_arguments(std::string_view text) {
  TensorReader in(text);
  std::vector<Argument> out;
  if (in.at_end()) return out;
  for (bool more = true; more;) {  // (a comma promises another argument)
    out.push_back(reworded(argument_text(out.size()), "", [&] {
      Argument a = read_argument(in);
      more = !in.at_end();
      if (more && !in.accept(',')) in.expected("',' between arguments");
      return a;
    }));
  }
  return out;
}

std::vector<nx::Tensor> make_arguments(const std::vector<Argument>& args) {
  std::vector<nx::Tensor> out;
  for (const Argument& a : args) out.push_back(reworded(argument_text(out.size()), "", a.make));
  return out;
}

std::vector<nx::Tensor> stand_ins(const std::vector<Argument>& args) {
  std::vector<nx::Tensor> out;
  for (const Argument& a : args) out.push_back(a.stand_in);
  return out;
}

}  // namespace rune::repl
