// The generator of maps (rune::vmap): a body generated like any block,
// called on a lane of each mapped operand (axis 0) and on captures. Kinds of
// map case, each switchable (map_kinds()): lanes of rank 1 or more, 0-d
// lanes, zero lanes, rune::Total adds inside the map, an nx::check inside a
// cond whose branch a lane takes only when the check holds, and
// rune::lanes (the collective) of a lane. test_generated checks every map
// against the same description with its maps run as loops over the lanes.
#include <cstdlib>
#include <string>

#include "generators.hpp"
#include "values.hpp"

namespace gen {

namespace {

// The kinds; one that meets a defect being fixed is off, with the reason.
// RUNE_GENERATED_MAP_KINDS=name,name (or all) turns kinds on for a run.
MapKind kinds[] = {
    {"lanes", true, ""},
    {"collectives", true, ""},
    {"scalar_lanes", true, ""},
    {"zero_lanes", true, ""},
    {"totals", true, ""},
    {"check_in_cond", true, ""},
};

void apply_environment() {
  const char* text = std::getenv("RUNE_GENERATED_MAP_KINDS");
  if (!text) return;
  std::string wanted(1, ',');  // (not "," + ...: GCC 12 warns falsely on that)
  wanted.append(text).append(1, ',');
  for (MapKind& k : kinds) {
    std::string name(1, ',');
    name.append(k.name).append(1, ',');
    if (wanted == ",all," || wanted.find(name) != std::string::npos) k.on = true;
  }
}

bool on(std::string_view name) {
  for (const MapKind& k : map_kinds())
    if (k.name == name) return k.on;
  throw std::logic_error("gen: no map kind " + std::string(name));
}

Type lane_of(Type t) {
  t.shape.erase(t.shape.begin());
  return t;
}

// Whether a value of type t may be mapped over: its axis 0 holds the lanes,
// 0-d lanes (vectors) and zero lanes only where those kinds are on.
bool mappable(const Type& t, bool scalar) {
  if (t.shape.empty() || (t.shape[0] == 0 && !on("zero_lanes"))) return false;
  return scalar ? t.shape.size() == 1 : t.shape.size() > 1 || on("scalar_lanes");
}

// The first operand mapped over: a value of the block (a vector, for 0-d
// lanes, sometimes), or a constant with no rows (zero lanes); -1 when the
// block has none.
int first_mapped(Builder& b) {
  if (on("zero_lanes") && b.rng.chance(0.15)) {
    nx::Shape shape = b.random_shape(2);
    if (shape.empty() && !on("scalar_lanes")) shape.push_back(b.random_dim());
    shape.insert(shape.begin(), 0);
    return b.constant(random_tensor(b.rng, Type{b.random_dtype(), shape}, b.gradient()));
  }
  if (!on("lanes") && !on("scalar_lanes")) return -1;
  const bool scalar = on("scalar_lanes") && (!on("lanes") || b.rng.chance(0.4));
  return b.pick([&](const Type& t) { return mappable(t, scalar); });
}

// A cond whose then-branch checks the predicate that chose it: every lane
// that takes it passes the check, so the map must not throw.
void checked_cond(Builder& b) {
  const int pred = b.predicate(b.pick_any());
  Op op = make_op(Kind::cond, {pred, pred});
  add_captures(b, op, 0, 1);
  const std::vector<Type> captures = types_of(b, std::span<const int>(op.in).subspan(1));
  std::vector<Type> outs;
  auto then_branch = sub_block(b, captures, [&](Builder& inner, Block& block) {
    inner.emit(make_op(Kind::check, {0}), std::span<const Type>());
    inner.grow(int(inner.rng.uniform(1, 2)));
    block.results = some_unread(inner);
    for (int r : block.results) outs.push_back(inner.type(r));
  });
  auto else_branch = sub_block(b, captures, [&](Builder& inner, Block& block) {
    inner.grow(int(inner.rng.uniform(0, 2)));
    for (const Type& t : outs) block.results.push_back(inner.provide(t));
  });
  op.blocks = {then_branch, else_branch};
  b.emit(std::move(op), outs);
}

bool map(Builder& b) {
  if (!room(b)) return false;
  const int first = first_mapped(b);
  if (first < 0) return false;
  const std::int64_t lanes = b.type(first).shape[0];
  Op op = make_op(Kind::map, {first});
  if (b.rng.chance(0.4)) {
    const int second = b.pick([&](const Type& t) { return mappable(t, false) && t.shape[0] == lanes; });
    if (second >= 0) op.in.push_back(second);
  }
  op.carries = int(op.in.size());
  op.axis = lanes;
  add_captures(b, op, 0, 2);
  std::vector<Type> params;
  for (int k = 0; k < op.carries; ++k) params.push_back(lane_of(b.type(op.in[std::size_t(k)])));
  for (std::size_t k = std::size_t(op.carries); k < op.in.size(); ++k) params.push_back(b.type(op.in[k]));
  std::vector<Type> outs;
  op.blocks = {sub_block(b, params, [&](Builder& inner, Block& block) {
    if (!on("totals")) inner.totals.clear();
    if (on("collectives") && inner.rng.chance(0.3)) {
      Type all = params[0];
      all.shape.insert(all.shape.begin(), lanes);
      inner.emit(make_op(Kind::lanes, {0}), all);
    }
    if (on("check_in_cond") && room(inner) && inner.rng.chance(0.4)) checked_cond(inner);
    inner.grow(int(inner.rng.uniform(1, 3)));
    if (!inner.totals.empty() && inner.rng.chance(0.7)) {  // each lane adds (docs/loops.md), the same value too
      const int same = inner.rng.chance(0.5) ? inner.constant(random_tensor(inner.rng, Type{nx::int32, {}}, true)) : -1;
      add_to_total(inner, std::size_t(inner.rng.uniform(0, std::int64_t(inner.totals.size()) - 1)), same);
    }
    block.results = some_unread(inner);
    for (int r : block.results) {
      Type t = inner.type(r);
      t.shape.insert(t.shape.begin(), lanes);
      outs.push_back(t);
    }
  })};
  b.emit(std::move(op), outs);
  return true;
}

const Generator generators[] = {{"map", 2, map}};

}  // namespace

std::span<MapKind> map_kinds() {
  static const bool read = (apply_environment(), true);
  (void)read;
  return kinds;
}

std::span<const Generator> map_generators() { return generators; }

}  // namespace gen
