// The generators of operations, one per kind of operation, by family. Each
// adds one operation to the builder's block, or returns false when the
// block has no fitting operand (the builder then draws another).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>
#include <string_view>

#include "builder.hpp"

namespace gen {

struct Generator {
  std::string_view name;
  int weight;
  bool (*emit)(Builder&);
};

std::span<const Generator> elementwise_generators();
std::span<const Generator> shape_generators();
std::span<const Generator> indexing_generators();
std::span<const Generator> linalg_generators();
std::span<const Generator> random_generators();
std::span<const Generator> scan_generators();
std::span<const Generator> construct_generators();
std::span<const Generator> map_generators();

// A kind of map case (maps.cpp), on or off; an off one names the issue whose
// fix turns it on.
struct MapKind {
  std::string_view name;
  bool on;
  std::string_view off_until;
};
std::span<MapKind> map_kinds();

// Helpers of the constructs' generators (constructs.cpp).
// Whether a construct may go into b's block (two levels at most, fewer deeper).
bool room(Builder& b);
// A block taking values of these types, filled by `fill` (which grows it and
// sets its results) one construct deeper than b's.
std::shared_ptr<const Block> sub_block(Builder& b, std::vector<Type> params,
                                       const std::function<void(Builder&, Block&)>& fill);
std::vector<Type> types_of(const Builder& b, std::span<const int> values);
// Values of the block, `least` to `most` of them, appended to op's operands (captures).
void add_captures(Builder& b, Op& op, int least, int most);
// The values nothing reads, at most two (the newest): a function's results.
std::vector<int> some_unread(const Builder& b);
// An add of a scalar reduction (of `value`, or of a value of the block when
// it is -1), fitted to the type of the open total `which`.
void add_to_total(Builder& b, std::size_t which, int value = -1);

}  // namespace gen
