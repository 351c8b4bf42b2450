// The scan generator: carries, one or two xs, captures of the enclosing
// block, and a step generated like any block (so it may hold a scan itself:
// two levels of constructs at most).
#include <optional>

#include "generators.hpp"

namespace gen {

namespace {

const char* const empty_xs_error = "rune::scan: xs is empty along the scan axis";

// The scanned value: one of the block's with that many rows (any few rows
// when not given), or one broadcast to them.
int scanned(Builder& b, std::optional<std::int64_t> rows) {
  if (rows != 0 && b.rng.chance(0.6)) {
    const int x = b.pick([&](const Type& t) {
      return !t.shape.empty() && (rows ? t.shape[0] == *rows : t.shape[0] >= 1 && t.shape[0] <= 5);
    });
    if (x >= 0) return x;
  }
  const int v = b.pick_any();
  Op op = make_op(Kind::broadcast, {v});
  op.shape = b.type(v).shape;
  op.shape.insert(op.shape.begin(), rows.value_or(b.rng.uniform(1, 4)));
  const Type out{b.type(v).dtype, op.shape};
  return b.emit(std::move(op), out);
}

// The step's results: its carries, then as ys the values it made that
// nothing reads (at least one when there is no carry).
Block make_step(Builder& b, const Op& op) {
  Block step;
  for (std::size_t i = 0; i < op.in.size(); ++i) {
    Type t = b.type(op.in[i]);
    if (int(i) >= op.carries && int(i) < op.carries + op.xs) t.shape.erase(t.shape.begin());  // a row
    step.types.push_back(t);
  }
  step.params = int(step.types.size());
  Builder inner = b.nested(step);
  inner.grow(int(b.rng.uniform(1, 5)));
  std::vector<int> ys = inner.unread();
  for (int i = 0; i < op.carries; ++i) step.results.push_back(inner.provide(step.types[std::size_t(i)]));
  if (op.carries > 0 && b.rng.chance(0.3)) ys.clear();
  step.results.insert(step.results.end(), ys.begin(), ys.end());
  return step;
}

bool scan(Builder& b) {
  if (b.depth >= max_depth) return false;
  // Rarely, xs with no rows: the API refuses them, and every route must say so.
  const bool empty = !b.gradient() && b.depth == 0 && !b.c.error && b.rng.chance(0.03);
  Op op = make_op(Kind::scan, {});
  for (std::int64_t i = b.rng.uniform(0, 2); i > 0; --i) op.in.push_back(b.pick_any());
  op.carries = int(op.in.size());
  const int x = scanned(b, empty ? std::optional<std::int64_t>(0) : std::nullopt);
  const std::int64_t rows = b.type(x).shape[0];
  op.in.push_back(x);
  if (b.rng.chance(0.3)) op.in.push_back(scanned(b, rows));
  op.xs = int(op.in.size()) - op.carries;
  for (std::int64_t i = b.rng.uniform(0, 2); i > 0; --i) op.in.push_back(b.pick_any());  // captures
  op.step = std::make_shared<const Block>(make_step(b, op));
  if (empty) b.c.error = empty_xs_error;

  std::vector<Type> outs;
  for (std::size_t i = 0; i < op.step->results.size(); ++i) {
    Type t = op.step->types[std::size_t(op.step->results[i])];
    if (int(i) >= op.carries) t.shape.insert(t.shape.begin(), rows);  // stacked
    outs.push_back(t);
  }
  b.emit(std::move(op), outs);
  return true;
}

const Generator generators[] = {{"scan", 3, scan}};

}  // namespace

std::span<const Generator> scan_generators() { return generators; }

}  // namespace gen
