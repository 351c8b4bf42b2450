// Structures ("trees", JAX's pytrees): the values every transformation takes
// and returns.
//
// A structure is an nx::Tensor (a dynamic leaf, traced), a static leaf (an
// integral type, bool, enum, float or double: never traced, part of a
// compiled key by its value, a float's by its bits), or a
// std::pair, std::tuple, std::array, std::vector, std::optional or
// std::map<std::string, T> of structures, or a struct made walkable with
// RUNE_TREE. Walks visit tensor leaves depth first: elements in order,
// struct fields in the order RUNE_TREE names them, map entries in map order.
//
// Paths name a node: segments joined by '.', an index for pair/tuple/array/
// vector items, the name for struct fields and map keys; an optional's
// contents share its path. The root's path is the prefix a walk is given,
// empty by default, and an empty path is written "the root" in messages
// (path_name). So with prefix "" a pair's leaves are "0" and "1", with
// prefix "1" they are "1.0" and "1.1", and a lone tensor's path is "".
#pragma once

#include <array>
#include <bit>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include <boost/container_hash/hash.hpp>
#include <boost/core/demangle.hpp>

#include "rune/dtype.hpp"
#include "rune/tensor.hpp"

// RUNE_TREE(Type, field1, field2, ...); at namespace scope, in Type's own
// namespace (walks find the fields by argument-dependent lookup). Names the
// public fields that make up the structure, in walk order; any other member
// is copied as it is when a structure is rebuilt. At least 64 fields.
#define RUNE_TREE(Type, ...)                                                              \
  constexpr auto rune_tree_fields(const Type*) {                                         \
    return std::make_tuple(RUNE_TREE_DETAIL_FOR_EACH(Type, __VA_ARGS__));               \
  }                                                                                      \
  static_assert(::rune::tree_detail::fields_are_trees<Type>(),                           \
                "RUNE_TREE(" #Type "): every field must be a structure")

// A field list expands by recursion through deferred re-scans (each EXPAND
// level multiplies the number of re-scans by 4; 4^3 allows 64 fields).
#define RUNE_TREE_DETAIL_FIELD(Type, f) ::rune::tree_detail::field(#f, &Type::f)
#define RUNE_TREE_DETAIL_PARENS ()
#define RUNE_TREE_DETAIL_EXPAND(...) \
  RUNE_TREE_DETAIL_EXPAND2(RUNE_TREE_DETAIL_EXPAND2(RUNE_TREE_DETAIL_EXPAND2(RUNE_TREE_DETAIL_EXPAND2(__VA_ARGS__))))
#define RUNE_TREE_DETAIL_EXPAND2(...) \
  RUNE_TREE_DETAIL_EXPAND1(RUNE_TREE_DETAIL_EXPAND1(RUNE_TREE_DETAIL_EXPAND1(RUNE_TREE_DETAIL_EXPAND1(__VA_ARGS__))))
#define RUNE_TREE_DETAIL_EXPAND1(...) \
  RUNE_TREE_DETAIL_EXPAND0(RUNE_TREE_DETAIL_EXPAND0(RUNE_TREE_DETAIL_EXPAND0(RUNE_TREE_DETAIL_EXPAND0(__VA_ARGS__))))
#define RUNE_TREE_DETAIL_EXPAND0(...) __VA_ARGS__
#define RUNE_TREE_DETAIL_FOR_EACH(Type, ...) \
  __VA_OPT__(RUNE_TREE_DETAIL_EXPAND(RUNE_TREE_DETAIL_FOR_EACH_STEP(Type, __VA_ARGS__)))
#define RUNE_TREE_DETAIL_FOR_EACH_STEP(Type, f, ...) \
  RUNE_TREE_DETAIL_FIELD(Type, f) __VA_OPT__(, RUNE_TREE_DETAIL_FOR_EACH_AGAIN RUNE_TREE_DETAIL_PARENS(Type, __VA_ARGS__))
#define RUNE_TREE_DETAIL_FOR_EACH_AGAIN() RUNE_TREE_DETAIL_FOR_EACH_STEP

namespace rune {

class TreeKey;
namespace tree_detail {
template <class T> TreeKey make_key(const T& x, bool leaf_specs, bool layouts = false);
}

// The description of a structure that decides whether two calls can share a
// compiled program: the C++ type (which fixes every container kind and
// struct), then, in walk order, each fact a value adds to it: vector lengths,
// optional presence, map keys, static leaf values and each tensor leaf's
// dtype, shape and placement. Each fact keeps the path of its node for
// messages; paths follow from the type and the facts, so equality and the
// hash ignore them. Keys are made by key_of (so the facts always follow
// from the type); a default TreeKey is the key of std::tuple<>{}.
class TreeKey {
 public:
  struct Length {
    std::size_t n;
    bool operator==(const Length&) const = default;
  };
  struct Presence {
    bool some;
    bool operator==(const Presence&) const = default;
  };
  struct Keys {
    std::vector<std::string> names;
    bool operator==(const Keys&) const = default;
  };
  // A float or double static leaf, compared by its bits: -0.0 and 0.0 are
  // distinct keys (a program may tell them apart), and a NaN is its own.
  struct Real {
    double value;
    bool operator==(const Real& other) const {
      return std::bit_cast<std::uint64_t>(value) == std::bit_cast<std::uint64_t>(other.value);
    }
  };
  struct Value {
    std::variant<std::int64_t, std::uint64_t, bool, Real> value;
    bool operator==(const Value&) const = default;
  };
  struct Leaf {
    nx::DType dtype;
    nx::Shape shape;
    nx::Placement placement;
    bool strided = false;  // not in C order (a view); only compiled keys record it
    bool operator==(const Leaf&) const = default;
  };
  using Fact = std::variant<Length, Presence, Keys, Value, Leaf>;
  struct Entry {
    std::string path;
    Fact fact;
  };

  TreeKey() : TreeKey(typeid(std::tuple<>), typeid(std::tuple<>).hash_code(), {}) {}

  const std::type_info& type() const { return *type_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // Cached: a key is looked up in a compiled function's cache on every call.
  std::size_t hash() const { return hash_; }

  friend bool operator==(const TreeKey& a, const TreeKey& b) {
    if (a.hash_ != b.hash_ || *a.type_ != *b.type_ || a.entries_.size() != b.entries_.size())
      return false;
    for (std::size_t i = 0; i < a.entries_.size(); ++i)
      if (a.entries_[i].fact != b.entries_[i].fact) return false;
    return true;
  }

 private:
  template <class T> friend TreeKey tree_detail::make_key(const T& x, bool leaf_specs, bool layouts);
  // (type_hash: type.hash_code(), which hashes the type's name, computed
  // once per type by make_key)
  TreeKey(const std::type_info& type, std::size_t type_hash, std::vector<Entry> entries)
      : type_(&type), entries_(std::move(entries)), hash_(compute_hash(type_hash)) {}

  std::size_t compute_hash(std::size_t seed) const {
    for (const Entry& e : entries_) {
      boost::hash_combine(seed, e.fact.index());
      std::visit(
          [&](const auto& f) {
            using F = std::decay_t<decltype(f)>;
            if constexpr (std::same_as<F, Length>) boost::hash_combine(seed, f.n);
            else if constexpr (std::same_as<F, Presence>) boost::hash_combine(seed, f.some);
            else if constexpr (std::same_as<F, Keys>) boost::hash_combine(seed, f.names);
            else if constexpr (std::same_as<F, Value>)
              std::visit([&](auto v) {
                if constexpr (std::same_as<decltype(v), Real>) boost::hash_combine(seed, std::bit_cast<std::uint64_t>(v.value));
                else boost::hash_combine(seed, v);
              }, f.value);
            else {
              boost::hash_combine(seed, static_cast<int>(f.dtype));
              boost::hash_range(seed, f.shape.begin(), f.shape.end());
              boost::hash_combine(seed, f.placement.id());
              boost::hash_combine(seed, f.strided);
            }
          },
          e.fact);
    }
    return seed;
  }

  const std::type_info* type_;
  std::vector<Entry> entries_;
  std::size_t hash_;
};

// A path as a C string shows it whole: control characters (a NUL in a map
// key, or in a name read from program text) as \xHH, a backslash as \\.
inline std::string escaped_path(std::string_view path) {
  std::string s;
  for (char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f && c != '\\') {
      s += c;
      continue;
    }
    const char* digits = "0123456789abcdef";
    s += c == '\\' ? std::string("\\\\") : std::string("\\x") + digits[byte >> 4] + digits[byte & 15];
  }
  return s;
}

// How messages name a path: the path (escaped), or "the root" where it is empty.
inline std::string path_name(std::string_view path) {
  return path.empty() ? std::string("the root") : escaped_path(path);
}

namespace tree_detail {

// A field of a RUNE_TREE struct: its name (its path segment) and member.
template <class S, class M> struct Field {
  const char* name;
  M S::*member;
};
// (A function rather than Field{name, member}: clang before 17 does not
// deduce an aggregate's template arguments.)
template <class S, class M> constexpr Field<S, M> field(const char* name, M S::*member) { return {name, member}; }

// Unqualified calls below find a struct's fields by argument-dependent
// lookup only; this declaration keeps ordinary lookup from finding anything.
void rune_tree_fields() = delete;

template <class T> concept Tensor = std::same_as<T, nx::Tensor>;
template <class T> concept Static = std::integral<T> || std::is_enum_v<T> || std::floating_point<T>;
template <class T> concept Struct = std::is_class_v<T> && requires(const T* p) { rune_tree_fields(p); };

template <class T> inline constexpr bool is_optional = false;
template <class T> inline constexpr bool is_optional<std::optional<T>> = true;
template <class T> inline constexpr bool is_vector = false;
template <class T, class A> inline constexpr bool is_vector<std::vector<T, A>> = true;
template <class T> inline constexpr bool is_array = false;
template <class T, std::size_t N> inline constexpr bool is_array<std::array<T, N>> = true;
template <class T> inline constexpr bool is_pair = false;
template <class A, class B> inline constexpr bool is_pair<std::pair<A, B>> = true;
template <class T> inline constexpr bool is_tuple = false;
template <class... E> inline constexpr bool is_tuple<std::tuple<E...>> = true;
template <class T> inline constexpr bool is_map = false;
template <class V, class C, class A>
inline constexpr bool is_map<std::map<std::string, V, C, A>> = true;

template <class T> constexpr auto fields() { return rune_tree_fields(static_cast<const T*>(nullptr)); }

// Whether a pair or tuple holds references (a walkable argument list, as
// std::forward_as_tuple makes, which cannot be rebuilt).
template <class T> inline constexpr bool has_reference = false;
template <class... E> inline constexpr bool has_reference<std::tuple<E...>> = (std::is_reference_v<E> || ...);
template <class A, class B>
inline constexpr bool has_reference<std::pair<A, B>> = std::is_reference_v<A> || std::is_reference_v<B>;

template <class... S, class... M> constexpr auto member_types(std::type_identity<std::tuple<Field<S, M>...>>) {
  return std::type_identity<std::tuple<M...>>{};
}
// The types of a structure's children as a tuple (a RUNE_TREE struct's
// fields' types), void for a leaf or a type that is not a structure.
template <class U> constexpr auto children_of() {
  if constexpr (is_optional<U> || is_vector<U> || is_array<U>) return std::type_identity<std::tuple<typename U::value_type>>{};
  else if constexpr (is_map<U>) return std::type_identity<std::tuple<typename U::mapped_type>>{};
  else if constexpr (is_pair<U>) return std::type_identity<std::tuple<typename U::first_type, typename U::second_type>>{};
  else if constexpr (is_tuple<U>) return std::type_identity<U>{};
  else if constexpr (Struct<U>) return member_types(std::type_identity<decltype(fields<U>())>{});
  else return std::type_identity<void>{};
}
template <class U> concept HasChildren = !std::is_void_v<typename decltype(children_of<U>())::type>;
// Whether pred(std::type_identity<C>{}) holds for every child type C of U
// (all_children) or for one (any_child).
template <class U, class Pred> constexpr bool all_children(Pred pred) {
  return []<class... C>(std::type_identity<std::tuple<C...>>, Pred& p) {
    return (p(std::type_identity<C>{}) && ...);
  }(children_of<U>(), pred);
}
template <class U, class Pred> constexpr bool any_child(Pred pred) {
  return []<class... C>(std::type_identity<std::tuple<C...>>, Pred& p) {
    return (p(std::type_identity<C>{}) || ...);
  }(children_of<U>(), pred);
}

// A RUNE_TREE struct counts as a structure without looking into its fields
// (RUNE_TREE checks those), so a struct may hold a vector of itself.
template <class T> constexpr bool tree() {
  using U = std::remove_cvref_t<T>;
  if constexpr (Tensor<U> || Static<U> || Struct<U>) return true;
  else if constexpr (HasChildren<U>) return all_children<U>([](auto c) { return tree<typename decltype(c)::type>(); });
  else return false;
}

template <class... S, class... M> constexpr bool field_types_are_trees(std::type_identity<std::tuple<Field<S, M>...>>) {
  return (tree<M>() && ...);
}
template <class T> constexpr bool fields_are_trees() {
  return field_types_are_trees(std::type_identity<decltype(fields<T>())>{});
}

// Appends a segment to a walk's path while one child is walked. A walk that
// ignores paths passes a null path and builds none.
class Step {
 public:
  Step(std::string* path, std::string_view segment) : path_(path) {
    if (path_) append(segment);
  }
  Step(std::string* path, std::size_t index) : path_(path) {
    if (path_) append(std::to_string(index));
  }
  ~Step() {
    if (path_) path_->resize(size_);
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

 private:
  void append(std::string_view segment) {
    size_ = path_->size();
    if (size_ != 0) path_->push_back('.');
    path_->append(segment);
  }
  std::string* path_;
  std::size_t size_ = 0;
};

template <class S> TreeKey::Value static_value(S s) {
  if constexpr (std::is_enum_v<S>) return static_value(static_cast<std::underlying_type_t<S>>(s));
  else if constexpr (std::same_as<S, bool>) return {s};
  else if constexpr (std::floating_point<S>) return {TreeKey::Real{static_cast<double>(s)}};
  else if constexpr (std::is_signed_v<S>) return {static_cast<std::int64_t>(s)};
  else return {static_cast<std::uint64_t>(s)};
}

// Walks x depth first, calling v.tensor(path, leaf) for each tensor leaf and,
// where V::facts, v.fact(path, fact) for each fact of its key (path is then
// never null).
template <class V, class T> void walk(V& v, const T& x, std::string* path) {
  static_assert(tree<T>(), "rune: this type is not a structure (see rune/tree.hpp)");
  auto child = [&](auto segment, const auto& c) {
    Step step(path, segment);
    walk(v, c, path);
  };
  if constexpr (Tensor<T>) {
    v.tensor(path, x);
  } else if constexpr (Static<T>) {
    if constexpr (V::facts) v.fact(*path, static_value(x));
  } else if constexpr (is_optional<T>) {
    if constexpr (V::facts) v.fact(*path, TreeKey::Presence{x.has_value()});
    if (x) walk(v, *x, path);
  } else if constexpr (is_vector<T> || is_array<T>) {
    if constexpr (V::facts && is_vector<T>) v.fact(*path, TreeKey::Length{x.size()});
    for (std::size_t i = 0; i < x.size(); ++i) child(i, x[i]);
  } else if constexpr (is_pair<T>) {
    child(std::size_t{0}, x.first);
    child(std::size_t{1}, x.second);
  } else if constexpr (is_tuple<T>) {
    std::apply([&](const auto&... e) {
      std::size_t i = 0;
      (child(i++, e), ...);
    }, x);
  } else if constexpr (is_map<T>) {
    if constexpr (V::facts) {
      TreeKey::Keys keys;
      for (const auto& entry : x) keys.names.push_back(entry.first);
      v.fact(*path, std::move(keys));
    }
    for (const auto& [name, c] : x) child(std::string_view(name), c);
  } else {
    std::apply([&](const auto&... f) { (child(std::string_view(f.name), x.*f.member), ...); },
               fields<T>());
  }
}

// Gives f each tensor leaf, with its path where f takes one.
template <class F, bool Paths> struct LeafVisitor {
  static constexpr bool facts = false;
  F& f;
  void tensor(const std::string* path, const nx::Tensor& t) {
    if constexpr (Paths) f(*path, t);
    else f(t);
  }
};

// Records a key's facts; without leaf_specs, the key of the structure alone
// (which reads no tensor, so undefined tensors are welcome).
// Whether a concrete tensor's elements are not in C order (a stand-in has no layout).
inline bool strided(const nx::Tensor& t) {
  const auto& impl = *t.impl();
  if (!impl.storage) return false;
  std::int64_t step = 1;
  for (std::size_t i = impl.shape.size(); i-- > 0;) {
    if (impl.shape[i] != 1 && impl.strides[i] != step) return true;
    step *= impl.shape[i];
  }
  return false;
}

struct KeyBuilder {
  static constexpr bool facts = true;
  bool leaf_specs, layouts;
  std::vector<TreeKey::Entry> entries;
  void tensor(const std::string* path, const nx::Tensor& t) {
    if (leaf_specs)
      entries.push_back({*path, TreeKey::Leaf{t.dtype(), t.shape(), t.placement(), layouts && strided(t)}});
  }
  void fact(const std::string& path, TreeKey::Fact f) { entries.push_back({path, std::move(f)}); }
};

template <class T> TreeKey make_key(const T& x, bool leaf_specs, bool layouts) {
  KeyBuilder b{leaf_specs, layouts, {}};
  std::string path;
  walk(b, x, &path);
  static const std::size_t type_hash = typeid(std::remove_cvref_t<T>).hash_code();
  return TreeKey(typeid(std::remove_cvref_t<T>), type_hash, std::move(b.entries));
}

// A copy of x whose tensor leaves are g(leaf of x, leaves of rest at the
// same place...), taken in walk order. The rest must have x's structure.
template <class T, class G, class... R> T transform(G& g, const T& x, const R&... rest) {
  static_assert(tree<T>(), "rune: this type is not a structure (see rune/tree.hpp)");
  if constexpr (Tensor<T>) {
    return g(x, rest...);
  } else if constexpr (Static<T>) {
    return x;
  } else if constexpr (is_optional<T>) {
    return x ? T(transform(g, *x, *rest...)) : T();
  } else if constexpr (is_vector<T>) {
    T out;
    out.reserve(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out.push_back(transform(g, x[i], rest[i]...));
    return out;
  } else if constexpr (is_array<T> || is_pair<T> || is_tuple<T>) {
    static_assert(!has_reference<T>, "rune: a pair or tuple of references can be walked, not rebuilt");
    // Braced initialisers run in order, so g sees the leaves in walk order.
    auto item = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      return transform(g, std::get<I>(x), std::get<I>(rest)...);
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return T{item(std::integral_constant<std::size_t, I>{})...};
    }(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (is_map<T>) {
    T out;
    for (const auto& [name, c] : x) out.emplace_hint(out.end(), name, transform(g, c, rest.at(name)...));
    return out;
  } else {
    T out = x;
    auto set = [&](const auto& f) { out.*f.member = transform(g, x.*f.member, rest.*f.member...); };
    std::apply([&](const auto&... f) { (set(f), ...); }, fields<T>());
    return out;
  }
}

// "<what a> <label a>, <b> <label b>": the second value repeats the word
// only where the caller puts it there (length does, shape does not).
inline std::string contrast(std::string a, std::string_view la, std::string_view b, std::string_view lb) {
  a.append(" ").append(la).append(", ").append(b).append(" ").append(lb);
  return a;
}

inline std::string value_text(const TreeKey::Value& v) {
  return std::visit([](auto x) -> std::string {
    if constexpr (std::same_as<decltype(x), bool>) {
      return x ? "true" : "false";
    } else if constexpr (std::same_as<decltype(x), TreeKey::Real>) {
      char text[32];  // the shortest text that reads back to the same double
      return std::string(text, std::to_chars(text, text + sizeof text, x.value).ptr);
    } else {
      return std::to_string(x);
    }
  }, v.value);
}

inline std::string keys_text(const TreeKey::Keys& k) {
  std::string s = "[";
  for (std::size_t i = 0; i < k.names.size(); ++i) s.append(i ? ", " : "").append(k.names[i]);
  return s + "]";
}

// Two facts of the same kind that differ, as a message.
inline std::string contrast_facts(const TreeKey::Fact& a, const TreeKey::Fact& b, std::string_view la,
                                  std::string_view lb) {
  return std::visit([&](const auto& fa) {
    using F = std::decay_t<decltype(fa)>;
    const F& fb = std::get<F>(b);
    if constexpr (std::same_as<F, TreeKey::Length>)
      return contrast("length " + std::to_string(fa.n), la, "length " + std::to_string(fb.n), lb);
    else if constexpr (std::same_as<F, TreeKey::Presence>)
      return contrast(fa.some ? "Some" : "None", la, fb.some ? "Some" : "None", lb);
    else if constexpr (std::same_as<F, TreeKey::Keys>)
      return contrast("keys " + keys_text(fa), la, keys_text(fb), lb);
    else if constexpr (std::same_as<F, TreeKey::Value>)
      return contrast("value " + value_text(fa), la, value_text(fb), lb);
    else if (fa.dtype != fb.dtype)
      return contrast("dtype " + std::string(nx::name(fa.dtype)), la, nx::name(fb.dtype), lb);
    else if (fa.shape != fb.shape)
      return contrast("shape " + nx::to_string(fa.shape), la, nx::to_string(fb.shape), lb);
    else if (fa.placement != fb.placement)
      return contrast("placement " + std::string(fa.placement.name()), la, fb.placement.name(), lb);
    else
      return contrast(std::string("layout ") + (fa.strided ? "strided" : "contiguous"), la,
                      fb.strided ? "strided" : "contiguous", lb);
  }, a);
}

// Keys of one type agree in the kind of every fact up to their first
// difference, because each fact decides what follows it.
inline std::optional<std::string> compare(const TreeKey& a, const TreeKey& b, std::string_view la,
                                          std::string_view lb) {
  if (a.type() != b.type())
    return "the root: " + contrast("type " + boost::core::demangle(a.type().name()), la,
                                   boost::core::demangle(b.type().name()), lb);
  for (std::size_t i = 0; i < a.entries().size(); ++i) {
    const TreeKey::Entry& ea = a.entries()[i];
    const TreeKey::Entry& eb = b.entries()[i];
    if (ea.fact != eb.fact) return path_name(ea.path) + ": " + contrast_facts(ea.fact, eb.fact, la, lb);
  }
  return std::nullopt;
}

}  // namespace tree_detail

// Whether T (cv-qualifiers and references dropped) is a structure.
template <class T> inline constexpr bool is_tree = tree_detail::tree<T>();

// Calls f(path, leaf) (or f(leaf), which builds no paths) for each tensor
// leaf of x in walk order; the root's path is `prefix`.
template <class T, class F> void for_each_leaf(const T& x, F&& f, std::string prefix = {}) {
  if constexpr (std::invocable<F&, const nx::Tensor&>) {
    tree_detail::LeafVisitor<F, false> v{f};
    tree_detail::walk(v, x, nullptr);
  } else {
    tree_detail::LeafVisitor<F, true> v{f};
    tree_detail::walk(v, x, &prefix);
  }
}

template <class T> std::size_t leaf_count(const T& x) {
  std::size_t n = 0;
  for_each_leaf(x, [&](const nx::Tensor&) { ++n; });
  return n;
}

// The tensor leaves of x in walk order.
template <class T> std::vector<nx::Tensor> leaves(const T& x) {
  std::vector<nx::Tensor> out;
  for_each_leaf(x, [&](const nx::Tensor& t) { out.push_back(t); });
  return out;
}

// The tensor leaves of what a traced function returned; throws
// "<api>: the result 1.w holds no value (it was default-constructed)" for an
// undefined one (paths as key_of names them).
template <class T> std::vector<nx::Tensor> result_leaves(std::string_view api, const T& result) {
  std::vector<nx::Tensor> out;
  for_each_leaf(result, [&](const std::string& path, const nx::Tensor& t) {
    if (!t.defined())
      throw std::invalid_argument(std::string(api) + ": the result" + (path.empty() ? "" : " " + path) +
                                  " holds no value (it was default-constructed)");
    out.push_back(t);
  });
  return out;
}

// The inverse of leaves(): a copy of `like` whose tensor leaves are replaced,
// in walk order, by `leaves`; everything else (static leaves, vector
// lengths, optional presence, map keys) comes from `like`. The new leaves'
// dtypes and shapes are not checked. Throws std::invalid_argument when the
// counts differ.
template <class T> T rebuild(const T& like, std::span<const nx::Tensor> leaves) {
  if (std::size_t n = leaf_count(like); n != leaves.size())
    throw std::invalid_argument("rune::rebuild: the structure has " + std::to_string(n) +
                                " tensor leaves, got " + std::to_string(leaves.size()));
  std::size_t i = 0;
  auto next = [&](const nx::Tensor&) { return leaves[i++]; };
  return tree_detail::transform(next, like);
}

// x with every tensor leaf replaced by f(leaf), called in walk order.
template <class T, class F> T map_leaves(const T& x, F&& f) {
  auto g = [&](const nx::Tensor& t) -> nx::Tensor { return f(t); };
  return tree_detail::transform(g, x);
}

// x's key. Every tensor leaf must be defined (its dtype, shape and placement
// are read). Keys of an argument list, key_of(std::forward_as_tuple(args...)),
// name each argument's leaves from its position: "0", "1.w".
template <class T> TreeKey key_of(const T& x) { return tree_detail::make_key(x, true); }
// A compiled function's key: key_of plus each tensor's layout (C order or a
// strided view), on which a compiled program may depend.
template <class T> TreeKey compiled_key_of(const T& x) { return tree_detail::make_key(x, true, true); }

// The first difference between two keys, "<path>: <what> <a> <label_a>,
// <b> <label_b>" (path "the root" where empty), e.g.
// "0: shape [5] here, [3] in the previous key"; nullopt for equal keys.
inline std::optional<std::string> first_difference(const TreeKey& a, const TreeKey& b,
                                                   std::string_view label_a, std::string_view label_b) {
  return tree_detail::compare(a, b, label_a, label_b);
}

// The first difference between two structures in type, structure, static
// values and tensor dtypes, shapes and placements (not elements), e.g.
// "1: length 3 in the carry the step returned, length 2 in the carry it
// received"; nullopt where they agree.
template <class A, class B>
  requires(is_tree<A> && is_tree<B>)
std::optional<std::string> first_difference(const A& a, const B& b, std::string_view label_a,
                                            std::string_view label_b) {
  return first_difference(key_of(a), key_of(b), label_a, label_b);
}

// a with every tensor leaf replaced by f(leaf of a, leaf of b), in walk
// order. Throws std::invalid_argument where a and b differ in structure or
// static values; their tensors are not read (they may differ in dtype and
// shape, or be undefined).
template <class T, class F> T map_leaves2(const T& a, const T& b, F&& f) {
  if (auto d = tree_detail::compare(tree_detail::make_key(a, false), tree_detail::make_key(b, false),
                                    "in the first", "in the second"))
    throw std::invalid_argument("rune::map_leaves2: " + *d);
  auto g = [&](const nx::Tensor& x, const nx::Tensor& y) -> nx::Tensor { return f(x, y); };
  return tree_detail::transform(g, a, b);
}

}  // namespace rune

template <> struct std::hash<rune::TreeKey> {
  std::size_t operator()(const rune::TreeKey& k) const noexcept { return k.hash(); }
};
