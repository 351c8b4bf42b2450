#include "tools/repl/inspect.hpp"

#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "ops/nan_hunt.hpp"
#include "rune/nx.hpp"
#include "tools/repl/names.hpp"

namespace rune::repl {

namespace {

std::string trimmed(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

// An integer of an index, or nothing for an empty bound.
std::optional<std::int64_t> bound(const std::string& text, const std::string& name) {
  const std::string t = trimmed(text);
  if (t.empty()) return std::nullopt;
  std::int64_t k = 0;
  auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), k);
  if (error != std::errc() || end != t.data() + t.size())
    throw std::invalid_argument(name + ": '" + t + "' is not an index (K, A:B, A: or :B per axis)");
  return k;
}

// Each element as a double, in C order (a complex value: its magnitudes).
std::vector<double> magnitudes(const nx::Tensor& t) {
  if (!nx::is_complex(t.dtype())) return nx::to_vector<double>(t);
  std::vector<double> out;
  for (const std::complex<double>& z : nx::to_vector<std::complex<double>>(t)) out.push_back(std::abs(z));
  return out;
}

std::string number_text(double x) {
  char out[32];
  std::snprintf(out, sizeof out, "%.7g", x);
  return out;
}

}  // namespace

std::vector<std::string> value_words(const std::string& args) {
  std::vector<std::string> words;
  std::string word;
  int depth = 0;
  for (char c : args) {
    if ((c == ' ' || c == '\t' || c == ',') && depth == 0) {
      if (!word.empty()) words.push_back(word);
      word.clear();
      continue;
    }
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    word += c;
  }
  if (depth != 0) throw std::invalid_argument("'" + word + "': the index has no closing ]");
  if (!word.empty()) words.push_back(word);
  return words;
}

IndexedName parse_indexed(const std::string& word) {
  const std::size_t open = word.find('[');
  if (open == std::string::npos) return {parse_name(word), ""};
  if (word.back() != ']') throw std::invalid_argument("'" + word + "' is not a value name like %7 or %7[2:5]");
  return {parse_name(word.substr(0, open)), word.substr(open + 1, word.size() - open - 2)};
}

nx::Tensor indexed(const nx::Tensor& t, const std::string& index, const std::string& name) {
  std::vector<std::string> items;
  for (std::size_t at = 0;;) {
    const std::size_t comma = index.find(',', at);
    items.push_back(index.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  const nx::Shape& shape = t.shape();
  if (items.size() > shape.size())
    throw std::invalid_argument(name + " has " + std::to_string(shape.size()) + " axes (" +
                                std::string(nx::name(t.dtype())) + " " + nx::to_string(shape) + "), the index has " +
                                std::to_string(items.size()));
  nx::Shape starts(shape.size(), 0), stops = shape;
  nx::Axes dropped;
  for (std::size_t axis = 0; axis < items.size(); ++axis) {
    const std::int64_t n = shape[axis];
    const std::string& item = items[axis];
    const std::size_t colon = item.find(':');
    auto in_range = [&](std::int64_t k, bool stop) {
      const std::int64_t at = k < 0 ? k + n : k;
      if (at < 0 || at > n || (!stop && at == n))
        throw std::invalid_argument(name + ": index " + std::to_string(k) + " is outside axis " +
                                    std::to_string(axis) + " of length " + std::to_string(n));
      return at;
    };
    if (colon == std::string::npos) {
      const std::optional<std::int64_t> k = bound(item, name);
      if (!k) throw std::invalid_argument(name + ": an empty index (K, A:B, A: or :B per axis)");
      starts[axis] = in_range(*k, false);
      stops[axis] = starts[axis] + 1;
      dropped.push_back(std::int64_t(axis));
    } else {
      const std::optional<std::int64_t> a = bound(item.substr(0, colon), name), b = bound(item.substr(colon + 1), name);
      starts[axis] = a ? in_range(*a, true) : 0;
      stops[axis] = std::max(starts[axis], b ? in_range(*b, true) : n);
    }
  }
  nx::Tensor part = nx::slice(t, starts, stops);
  return dropped.empty() ? part : nx::squeeze(part, dropped);
}

std::string stats_text(const nx::Tensor& t) {
  const std::vector<double> v = magnitudes(t);
  std::int64_t nans = 0, infinite = 0, finite = 0;
  double low = std::numeric_limits<double>::infinity(), high = -low, total = 0;
  for (double x : v) {
    if (std::isnan(x)) {
      ++nans;
      continue;
    }
    if (std::isinf(x)) ++infinite;
    else ++finite, total += x;
    low = std::min(low, x), high = std::max(high, x);
  }
  const std::string of = nx::is_complex(t.dtype()) ? " (of the magnitudes)" : "";
  std::string out = v.size() == std::size_t(nans) ? "no number" : "min " + number_text(low) + ", max " + number_text(high);
  if (finite > 0) out += ", mean " + number_text(total / double(finite)) + (infinite ? " (of the finite)" : "");
  return out + of + ", " + std::to_string(nans) + " NaN, " + std::to_string(infinite) + " infinite";
}

std::optional<std::string> first_non_finite_text(const nx::Tensor& t) {
  const std::int64_t at = nx::ops::first_non_finite(t);
  if (at < 0) return std::nullopt;
  return std::string(std::isnan(magnitudes(t)[std::size_t(at)]) ? "nan" : "an infinity") + " at element " +
         std::to_string(at);
}

std::string summary_text(const nx::Tensor& t, std::int64_t shown) {
  if (t.numel() <= shown) return nx::to_string(t);
  const nx::Tensor first = nx::slice(nx::reshape(t, {-1}), {0}, {shown});
  std::string elements = nx::to_string(first);
  elements = elements.substr(elements.find('[', elements.find(']') + 1));  // (past "float64 [8] ")
  elements.insert(elements.size() - 1, ", ...");
  return std::string(nx::name(t.dtype())) + " " + nx::to_string(t.shape()) + " " + elements + "; " + stats_text(t);
}

}  // namespace rune::repl
