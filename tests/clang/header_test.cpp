// The public headers under another compiler: instantiates each
// transformation and construct over structures (a RUNE_TREE struct with
// static leaves and containers), so that a header construct one compiler
// accepts and another rejects fails here. The suite only compiles it
// (check.py); linked against the library, it runs to the end.
#include <rune/rune.h>
#include <rune/rune.hpp>

#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using nx::Tensor;

namespace game {

enum class Mode { walk, run };

struct Body {
  Tensor position, velocity;
  std::vector<Tensor> forces;
  std::optional<Tensor> spin;
  std::map<std::string, Tensor> extras;
  Mode mode = Mode::walk;
  int id = 0;
  std::string label;  // not a field: copied as it is
};
RUNE_TREE(Body, position, velocity, forces, spin, extras, mode, id);

struct Empty {};
RUNE_TREE(Empty);

}  // namespace game

namespace {

using game::Body;

Tensor energy(const Body& b) {
  Tensor e = nx::sum(b.velocity * b.velocity) + nx::sum(b.position);
  for (const Tensor& f : b.forces) e = e + nx::sum(f * b.position);
  if (b.spin) e = e + nx::sum(*b.spin * *b.spin);
  for (const auto& [name, x] : b.extras) e = e + nx::sum(x);
  return e;
}

Body moved(const Body& b, const Tensor& dt) {
  Body out = b;
  out.position = b.position + b.velocity * dt;
  return out;
}

}  // namespace

int main() {
  const Tensor v = nx::linspace(nx::float64, 0., 1., 3);
  const Tensor dt = nx::scalar(nx::float64, 0.1);
  Body body{v, v * 2., {v}, v, {{"drag", v}}, game::Mode::run, 7, "ball"};
  static_assert(rune::is_tree<Body> && rune::is_tree<game::Empty>);

  // Structures.
  std::vector<Tensor> all = rune::leaves(body);
  Body same = rune::rebuild(body, std::span<const Tensor>(all));
  Body twice = rune::map_leaves(same, [](const Tensor& t) { return t * 2.; });
  Body sum = rune::map_leaves2(body, twice, [](const Tensor& a, const Tensor& b) { return a + b; });
  rune::for_each_leaf(sum, [](const std::string&, const Tensor&) {});
  auto difference = rune::first_difference(body, sum, "in a", "in b");
  std::hash<rune::TreeKey> hash;
  (void)hash(rune::key_of(std::forward_as_tuple(body, v)));

  // Differentiation.
  Body g = rune::grad(energy, body);
  auto [e, g2] = rune::value_and_grad(energy, body);
  auto [e3, g3, aux] = rune::value_and_grad_aux([](const Body& b) { return std::pair{energy(b), b.id}; }, body);
  auto [y, pullback] = rune::vjp([&](const Body& b) { return moved(b, dt); }, body);
  Body ct = pullback(y);
  auto [p, t] = rune::jvp([&](const Body& b) { return moved(b, dt); }, body, body);
  auto norm = [](const Tensor& x) { return nx::sum(nx::sin(x) * x); };
  Tensor j = rune::jacfwd(nx::sin, v) + rune::jacrev(nx::cos, v) + rune::hessian(norm, v);
  rune::GradCheck check = rune::check_grads(energy, body);
  Tensor d = rune::detach(v);

  // Custom rules, over a structure in and out.
  auto scaled = rune::custom_vjp([](const std::pair<Tensor, Tensor>& ab) {
    const Tensor a = ab.first, b = ab.second;
    return std::pair{std::tuple{a * b}, [a, b](const std::tuple<Tensor>& c) {
                       return std::pair{std::get<0>(c) * b, std::get<0>(c) * a};
                     }};
  });
  auto softplus = rune::custom_jvp([](const Tensor& x) {
    return std::pair{nx::log1p(nx::exp(x)), [x](const Tensor& tx) { return tx * nx::sigmoid(x); }};
  });
  Tensor custom = rune::grad([&](const Tensor& x) { return nx::sum(std::get<0>(scaled(std::pair{x, x}))); }, v) +
                  rune::jvp(softplus, v, v).second;

  // Compilation, maps and programs.
  auto compiled = rune::jit([&](const Body& b, const Tensor& step) { return moved(b, step); });
  Body c = compiled(body, dt);
  auto compiled_grad = rune::jit(rune::grad(energy));
  Body cg = compiled_grad(body);
  const Tensor rows = nx::reshape(nx::linspace(nx::float64, 0., 1., 6), {2, 3});
  rune::Axis outer = rune::axis();
  auto per_row = rune::vmap(
      [&](const Tensor& row) { return rune::lanes(outer, row) * double(rune::lane_count()); }, outer);
  auto by_index = rune::vmap([](const Tensor& row) { return row * nx::cast(rune::lane_index(), nx::float64); });
  Tensor mapped = per_row(rows) + by_index(rows);
  rune::Program program = rune::program([&](const Body& b) { return moved(b, dt); }, body);
  std::vector<Tensor> ran = rune::run(program, rune::leaves(body));

  // Embedding: a compiled function's named program as a typed callable, on
  // caller memory.
  auto pair_step = rune::jit([](const std::pair<Tensor, Tensor>& s, const Tensor& h) {
    return std::pair{s.first + s.second * h, s.second};
  });
  double memory[4] = {0., 0., 1., 1.};
  const std::pair<Tensor, Tensor> state{nx::borrow(nx::float64, {2}, memory), nx::borrow(nx::float64, {2}, memory + 2)};
  rune::Loaded<std::pair<Tensor, Tensor>(std::pair<Tensor, Tensor>, Tensor)> loaded(pair_step.program(state, dt));
  loaded.into(state, state, dt);
  std::pair<Tensor, Tensor> stepped = loaded(state, dt);

  // Loops and branches.
  auto [final_body, ys] = rune::scan(
      [&](const Body& b, const Tensor& row) { return std::pair{moved(b, dt), nx::sum(row)}; }, body, rows);
  auto [counted, nothing] = rune::scan([](const Tensor& x) { return std::pair{x + 1., std::tuple<>{}}; }, v, 4);
  Tensor halved = rune::iterate(
      10, [](const Tensor& x) { return nx::all(nx::less(x, 0.1)); }, [](const Tensor& x) { return x / 2.; }, v);
  const Tensor a = nx::create(nx::float64, {2}, {4., 9.});
  Tensor root = rune::root([a](const Tensor& x) { return x * x - a; }, [a] { return nx::sqrt(a); }) +
                rune::root([a](const Tensor& x) { return x * x - a; }, [a] { return nx::sqrt(a); },
                           [](auto op, const Tensor& b) { return b / op(nx::ones_like(b)); });
  Tensor branch = rune::cond(nx::greater(nx::sum(v), 0.), [&] { return v; }, [&] { return -v; }) +
                  rune::switch_<Tensor>(nx::scalar(nx::int32, 1), {[&] { return v; }, [&] { return v * v; }});
  Tensor re = rune::remat([](const Body& b) { return energy(b); })(body);
  rune::Total total;
  auto [collected, added] = rune::collect(total, nx::scalar(nx::float64, 0), [&] {
    total.add(nx::sum(v));
    return v;
  });

  // Effects.
  Tensor called = rune::callback([](const Tensor& x, int k) { return x * double(k); }, v, v, 3);
  nx::check(nx::greater_equal(v, 0.), v, [](const nx::Index& i, const Tensor& bad) {
    return std::make_exception_ptr(std::domain_error(nx::to_string(bad) + " at " + std::to_string(i[0])));
  });

  (void)difference, (void)g, (void)e, (void)g2, (void)e3, (void)g3, (void)aux, (void)ct, (void)p, (void)t;
  (void)j, (void)check, (void)d, (void)custom, (void)c, (void)cg, (void)mapped, (void)ran, (void)final_body;
  (void)ys, (void)counted, (void)nothing, (void)halved, (void)root, (void)branch, (void)re, (void)collected;
  (void)added, (void)called, (void)stepped;
}
