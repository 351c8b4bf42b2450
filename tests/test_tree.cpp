// Structures: what is a tree, walk order and paths, rebuilding, keys and the
// first-difference messages that scan, iterate and jit report.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "rune/nx.hpp"
#include "rune/tree.hpp"

using nx::Tensor;

namespace model {

enum class Act { relu, tanh };

struct Dense {
  Tensor w;
  Tensor b;
  Act act = Act::relu;
  int note = 0;  // not a field: copied through rebuilds, not part of a key
};
RUNE_TREE(Dense, w, b, act);

struct Net {
  std::vector<Dense> layers;
  std::map<std::string, Dense> heads;
  std::optional<Tensor> scale;
};
RUNE_TREE(Net, layers, heads, scale);

// A struct holding a vector of itself.
struct Node {
  Tensor value;
  std::vector<Node> children;
};
RUNE_TREE(Node, value, children);

struct Nothing {};
RUNE_TREE(Nothing);

}  // namespace model

struct GlobalPoint {
  Tensor x;
  std::int64_t id;
};
RUNE_TREE(GlobalPoint, x, id);

// Sixteen fields and more: the macro's field list is not capped at a few.
struct Wide {
  int f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19;
  Tensor t;
};
RUNE_TREE(Wide, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18,
          f19, t);

namespace {

Tensor z(nx::Shape shape, nx::DType dtype = nx::float64) { return nx::zeros(dtype, shape); }

// The paths of x's tensor leaves in walk order.
template <class T> std::vector<std::string> paths(const T& x, std::string prefix = {}) {
  std::vector<std::string> out;
  rune::for_each_leaf(x, [&](const std::string& p, const Tensor&) { out.push_back(p); }, prefix);
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("tree: which types are structures", "[tree]") {
  STATIC_REQUIRE(rune::is_tree<Tensor>);
  STATIC_REQUIRE(rune::is_tree<const Tensor&>);
  STATIC_REQUIRE(rune::is_tree<int>);
  STATIC_REQUIRE(rune::is_tree<std::int64_t>);
  STATIC_REQUIRE(rune::is_tree<bool>);
  STATIC_REQUIRE(rune::is_tree<model::Act>);
  STATIC_REQUIRE(rune::is_tree<std::tuple<>>);
  STATIC_REQUIRE(rune::is_tree<std::pair<Tensor, int>>);
  STATIC_REQUIRE(rune::is_tree<std::tuple<Tensor, std::vector<Tensor>, bool>>);
  STATIC_REQUIRE(rune::is_tree<std::array<Tensor, 3>>);
  STATIC_REQUIRE(rune::is_tree<std::optional<Tensor>>);
  STATIC_REQUIRE(rune::is_tree<std::map<std::string, Tensor>>);
  STATIC_REQUIRE(rune::is_tree<model::Net>);
  STATIC_REQUIRE(rune::is_tree<std::vector<model::Node>>);
  STATIC_REQUIRE(rune::is_tree<GlobalPoint>);
  STATIC_REQUIRE(rune::is_tree<std::tuple<const Tensor&, const model::Dense&>>);

  STATIC_REQUIRE(rune::is_tree<double>);  // float and double are static leaves
  STATIC_REQUIRE(rune::is_tree<std::vector<double>>);
  STATIC_REQUIRE(rune::is_tree<std::pair<Tensor, float>>);

  STATIC_REQUIRE_FALSE(rune::is_tree<std::string>);
  STATIC_REQUIRE_FALSE(rune::is_tree<long double*>);
  STATIC_REQUIRE_FALSE(rune::is_tree<std::map<int, Tensor>>);
  STATIC_REQUIRE_FALSE(rune::is_tree<std::tuple<Tensor, std::string>>);
}

TEST_CASE("tree: paths name each container kind", "[tree]") {
  CHECK(paths(z({})) == Strings{""});
  CHECK(paths(z({}), "2") == Strings{"2"});
  CHECK(paths(std::pair{z({}), z({})}) == Strings{"0", "1"});
  CHECK(paths(std::pair{z({}), z({})}, "1") == Strings{"1.0", "1.1"});
  CHECK(paths(std::tuple{z({}), 3, std::tuple{z({}), z({})}}) == Strings{"0", "2.0", "2.1"});
  CHECK(paths(std::array<Tensor, 2>{z({}), z({})}) == Strings{"0", "1"});
  CHECK(paths(std::vector<Tensor>{z({}), z({}), z({})}) == Strings{"0", "1", "2"});
  CHECK(paths(std::optional<Tensor>(z({})), "0") == Strings{"0"});
  CHECK(paths(std::optional<Tensor>()).empty());
  CHECK(paths(std::map<std::string, Tensor>{{"b", z({})}, {"a", z({})}}) == Strings{"a", "b"});
  CHECK(paths(std::tuple<>{}).empty());
  CHECK(paths(model::Nothing{}).empty());
  CHECK(paths(GlobalPoint{z({}), 7}) == Strings{"x"});
}

TEST_CASE("tree: structs walk fields in declaration order, nested anywhere", "[tree]") {
  model::Net net{{{z({2, 2}), z({2})}, {z({2, 1}), z({1})}},
                 {{"value", {z({1}), z({})}}, {"policy", {z({3}), z({})}}},
                 z({})};
  CHECK(paths(net, "0") == Strings{"0.layers.0.w", "0.layers.0.b", "0.layers.1.w", "0.layers.1.b",
                                   "0.heads.policy.w", "0.heads.policy.b", "0.heads.value.w",
                                   "0.heads.value.b", "0.scale"});

  model::Node tree{z({}), {{z({}), {}}, {z({}), {{z({}), {}}}}}};
  CHECK(paths(tree) == Strings{"value", "children.0.value", "children.1.value", "children.1.children.0.value"});

  Wide wide{};
  wide.t = z({});
  CHECK(paths(wide) == Strings{"t"});
}

TEST_CASE("tree: leaves and for_each_leaf without paths", "[tree]") {
  Tensor a = z({1}), b = z({2}), c = z({3});
  auto x = std::tuple{a, std::vector<Tensor>{b}, std::optional<Tensor>(c), 5};
  std::vector<Tensor> ls = rune::leaves(x);
  REQUIRE(ls.size() == 3);
  CHECK(ls[0].impl() == a.impl());
  CHECK(ls[1].impl() == b.impl());
  CHECK(ls[2].impl() == c.impl());
  CHECK(rune::leaf_count(x) == 3);

  int calls = 0;
  rune::for_each_leaf(x, [&](const Tensor&) { ++calls; });
  CHECK(calls == 3);

  // A tuple of references (an argument list) is walkable.
  model::Dense d{a, b};
  CHECK(paths(std::forward_as_tuple(c, d)) == Strings{"0", "1.w", "1.b"});
}

TEST_CASE("tree: rebuild replaces tensor leaves and keeps the rest", "[tree]") {
  model::Dense d{z({2, 2}), z({2}), model::Act::tanh, 42};
  auto x = std::tuple{d, std::vector<Tensor>{z({1})}, std::optional<Tensor>(), 9};
  std::vector<Tensor> fresh{z({5}), z({6}), z({7})};
  auto y = rune::rebuild(x, fresh);
  CHECK(std::get<0>(y).w.impl() == fresh[0].impl());
  CHECK(std::get<0>(y).b.impl() == fresh[1].impl());
  CHECK(std::get<0>(y).act == model::Act::tanh);
  CHECK(std::get<0>(y).note == 42);
  REQUIRE(std::get<1>(y).size() == 1);
  CHECK(std::get<1>(y)[0].impl() == fresh[2].impl());
  CHECK_FALSE(std::get<2>(y).has_value());
  CHECK(std::get<3>(y) == 9);

  std::map<std::string, std::array<Tensor, 2>> m{{"k", {z({}), z({})}}};
  auto m2 = rune::rebuild(m, std::vector<Tensor>{z({4}), z({5})});
  CHECK(m2.at("k")[1].shape() == nx::Shape{5});

  CHECK_THROWS_WITH(rune::rebuild(x, std::vector<Tensor>{z({})}),
                    "rune::rebuild: the structure has 3 tensor leaves, got 1");
  CHECK(rune::rebuild(std::tuple<>{}, {}) == std::tuple<>{});
}

TEST_CASE("tree: map_leaves and map_leaves2", "[tree]") {
  model::Net net{{{z({2, 2}), z({2})}}, {{"h", {z({3}), z({})}}}, z({4})};
  std::vector<nx::Shape> seen;
  auto out = rune::map_leaves(net, [&](const Tensor& t) {
    seen.push_back(t.shape());
    return nx::zeros(nx::float32, t.shape());
  });
  CHECK(seen == std::vector<nx::Shape>{{2, 2}, {2}, {3}, {}, {4}});
  for (const Tensor& t : rune::leaves(out)) CHECK(t.dtype() == nx::float32);
  CHECK(out.scale->shape() == nx::Shape{4});

  auto a = std::pair{z({1}), std::vector<Tensor>{z({2})}};
  auto b = std::pair{z({1}, nx::float32), std::vector<Tensor>{z({2}, nx::float32)}};
  auto c = rune::map_leaves2(a, b, [](const Tensor& x, const Tensor& y) {
    CHECK(x.shape() == y.shape());
    CHECK(y.dtype() == nx::float32);
    return x;
  });
  CHECK(c.second[0].impl() == a.second[0].impl());

  // Structure only: map_leaves2 reads no tensor, so undefined ones are welcome.
  auto filled = rune::map_leaves2(std::vector<Tensor>{Tensor()}, std::vector<Tensor>{z({2})},
                                  [](const Tensor& x, const Tensor& y) { return x.defined() ? x : y; });
  CHECK(filled[0].shape() == nx::Shape{2});

  auto longer = std::pair{z({1}), std::vector<Tensor>{z({2}), z({2})}};
  CHECK_THROWS_WITH(rune::map_leaves2(a, longer, [](const Tensor& x, const Tensor&) { return x; }),
                    "rune::map_leaves2: 1: length 1 in the first, length 2 in the second");
}

TEST_CASE("tree: keys are equal exactly when structure, statics and leaf types agree", "[tree]") {
  using Args = std::tuple<std::vector<Tensor>, int, std::optional<Tensor>>;
  Args base{{z({3}), z({2})}, 1, std::nullopt};
  rune::TreeKey k = rune::key_of(base);

  Args same{{z({3}), z({2})}, 1, std::nullopt};  // other tensors, same description
  CHECK(rune::key_of(same) == k);
  CHECK(rune::key_of(same).hash() == k.hash());
  CHECK(std::hash<rune::TreeKey>{}(rune::key_of(same)) == k.hash());

  Args shape{{z({4}), z({2})}, 1, std::nullopt};
  Args dtype{{z({3}, nx::float32), z({2})}, 1, std::nullopt};
  Args value{{z({3}), z({2})}, 2, std::nullopt};
  Args length{{z({3})}, 1, std::nullopt};
  Args present{{z({3}), z({2})}, 1, z({})};
  std::unordered_set<rune::TreeKey> keys{k};
  for (const Args* other : {&shape, &dtype, &value, &length, &present}) {
    rune::TreeKey ko = rune::key_of(*other);
    CHECK_FALSE(ko == k);
    CHECK(ko.hash() != k.hash());
    keys.insert(ko);
  }
  CHECK(keys.size() == 6);
  CHECK(keys.count(rune::key_of(same)) == 1);

  // Map keys, enum values and the C++ type are part of a key.
  using M = std::map<std::string, Tensor>;
  CHECK_FALSE(rune::key_of(M{{"a", z({})}}) == rune::key_of(M{{"b", z({})}}));
  model::Dense d1{z({}), z({}), model::Act::relu, 0}, d2{z({}), z({}), model::Act::tanh, 0};
  CHECK_FALSE(rune::key_of(d1) == rune::key_of(d2));
  d2.act = model::Act::relu;
  d2.note = 5;  // not a field
  CHECK(rune::key_of(d1) == rune::key_of(d2));
  CHECK_FALSE(rune::key_of(std::pair{z({}), 1}) == rune::key_of(std::tuple{z({}), 1}));
  CHECK(rune::key_of(std::tuple<>{}) == rune::TreeKey());

  // Entries record paths, for messages.
  rune::TreeKey kd = rune::key_of(std::forward_as_tuple(d1));
  REQUIRE(kd.entries().size() == 3);
  CHECK(kd.entries()[0].path == "0.w");
  CHECK(kd.entries()[2].path == "0.act");
}

TEST_CASE("tree: first_difference names the first difference", "[tree]") {
  const std::string_view got = "in the carry the step returned", had = "in the carry it received";
  using V = std::vector<Tensor>;

  CHECK(rune::first_difference(V{z({}), z({}), z({})}, V{z({}), z({})}, got, had) ==
        "the root: length 3 in the carry the step returned, length 2 in the carry it received");
  CHECK(rune::first_difference(std::pair{z({}), V{z({}), z({}), z({})}}, std::pair{z({}), V{z({}), z({})}},
                               "in X", "in Y") == "1: length 3 in X, length 2 in Y");
  CHECK(rune::first_difference(z({3}), z({2}), got, had) ==
        "the root: shape [3] in the carry the step returned, [2] in the carry it received");
  CHECK(rune::first_difference(std::tuple{model::Dense{z({2}, nx::float32), z({})}},
                               std::tuple{model::Dense{z({2}), z({})}}, "in X", "in Y") ==
        "0.w: dtype float32 in X, float64 in Y");
  CHECK(rune::first_difference(std::optional<Tensor>(), std::optional<Tensor>(z({})), "in X", "in Y") ==
        "the root: None in X, Some in Y");
  using M = std::map<std::string, Tensor>;
  CHECK(rune::first_difference(M{{"b", z({})}, {"a", z({})}}, M{{"a", z({})}}, "in X", "in Y") ==
        "the root: keys [a, b] in X, [a] in Y");
  CHECK(rune::first_difference(std::tuple{z({}), true, 3}, std::tuple{z({}), true, 4}, "in X", "in Y") ==
        "2: value 3 in X, 4 in Y");
  CHECK(rune::first_difference(std::tuple{false}, std::tuple{true}, "in X", "in Y") ==
        "0: value false in X, true in Y");

  // Only the first difference is named; element values are never compared.
  CHECK(rune::first_difference(std::pair{z({1}), z({1})}, std::pair{z({2}), z({3})}, "in X", "in Y") ==
        "0: shape [1] in X, [2] in Y");
  CHECK_FALSE(rune::first_difference(z({2}), nx::ones(nx::float64, {2}), "in X", "in Y").has_value());
  CHECK_FALSE(rune::first_difference(std::tuple<>{}, std::tuple<>{}, "in X", "in Y").has_value());

  // Different C++ types.
  CHECK(rune::first_difference(std::tuple{1}, std::tuple{true}, "in X", "in Y") ==
        "the root: type std::tuple<int> in X, std::tuple<bool> in Y");
}

TEST_CASE("tree: first_difference between keys, as jit reports a retrace", "[tree]") {
  rune::TreeKey previous = rune::key_of(std::forward_as_tuple(z({3})));
  rune::TreeKey here = rune::key_of(std::forward_as_tuple(z({5})));
  CHECK(rune::first_difference(here, previous, "here", "in the previous key") ==
        "0: shape [5] here, [3] in the previous key");
  CHECK_FALSE(rune::first_difference(previous, previous, "here", "in the previous key").has_value());
  CHECK(rune::path_name("") == "the root");
  CHECK(rune::path_name("1.w") == "1.w");
}
