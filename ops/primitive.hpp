// Primitives: the enum and properties expanded from primitives.def, their
// static parameters, and bind(), the one dispatch point of every operation.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "ops/concrete.hpp"
#include "rune/tensor.hpp"

namespace nx::ops {

enum class Prim : std::uint8_t {
#define PRIM(id, api, kind, arity, accepts, result, flags) id,
#include "ops/primitives.def"
#undef PRIM
};
inline constexpr int prim_count = 0
#define PRIM(id, api, kind, arity, accepts, result, flags) +1
#include "ops/primitives.def"
#undef PRIM
    ;

enum class Family : std::uint8_t { unary, binary, select, convert, reduce, arg, layout, linalg, random, collective, ranks };

// Operand dtype classes.
enum DTypeClass : std::uint8_t { B = 1, S = 2, U = 4, F = 8, C = 16 };
enum class ResultDType : std::uint8_t { Same, Bool, Real, Param, Int32 };
enum PrimFlag : std::uint8_t { Linear = 1, Commutative = 2, NoDiff = 4, Simd = 8 };
// A primitive that is NoDiff has no tangent (its results are integers or
// booleans, or it stops derivatives); one that is Linear has a transpose rule.

struct PrimInfo {
  std::string_view name;  // as in program text
  std::string_view api;   // the nx:: function, first in error messages
  Family family;
  int arity;  // -1: any number
  std::uint8_t accepts;
  ResultDType result;
  std::uint8_t flags;
};

inline constexpr PrimInfo prim_infos[] = {
#define PRIM(id, api, kind, arity, accepts, result, flags) \
  {#id, api, Family::kind, arity, std::uint8_t(accepts), ResultDType::result, std::uint8_t(flags)},
#include "ops/primitives.def"
#undef PRIM
};
constexpr const PrimInfo& info(Prim p) { return prim_infos[int(p)]; }

// Whether a primitive is elementwise: each element of its result computed
// from its operands' elements at the same place (its family unary,
// binary, select or convert).
constexpr bool is_elementwise(Prim p) {
  const Family f = info(p).family;
  return f == Family::unary || f == Family::binary || f == Family::select || f == Family::convert;
}

// Whether a primitive exchanges values with other lanes or processes, or
// reads the process it runs in (a map's collectives, the ranks' family):
// never folded at compile time nor moved out of a loop; it runs where the
// program calls it.
constexpr bool communicates(Prim p) {
  const Family f = info(p).family;
  return f == Family::collective || f == Family::ranks;
}

constexpr std::uint8_t dtype_class(DType d) {
  return d == DType::bool_ ? B : is_unsigned(d) ? U : is_integer(d) ? S : is_floating(d) ? F : C;
}

// Static parameters of an equation. Each primitive reads the fields its
// family documents; the others stay at their defaults, so equality and
// hashing (for CSE and compile keys) are over the whole struct.
// Where take and scatter_add send an index outside the indexed axis.
enum class IndexMode : std::uint8_t {
  clamp,  // counted from the end when negative, then clamped into the axis (nx::take, nx::scatter_add)
  drop,   // no row: take gives zeros there, scatter_add adds nothing (nx::segment_sum; JAX's "fill"/"drop")
};

struct Params {
  Axes axes;                 // reduce: axes; transpose: perm; flip: axes
  Shape shape;               // reshape/broadcast: target; dynamic_slice: sizes
  Shape starts, stops, steps;  // slice
  Shape lo, hi;              // pad: widths before and after, per axis
  Shape interior;            // pad: elements inserted between neighbours, per axis
  DType dtype = DType::float32;  // convert: the target
  double value = 0;          // pad: the fill value
  std::int64_t axis = 0;     // concatenate, take, argmax, argmin
  IndexMode mode = IndexMode::clamp;  // take, scatter_add: indices outside the axis
  // Equal parameters give equal results: `value` compares bit for bit (a
  // NaN fill equals itself; fills of +0 and -0 differ). A new field joins
  // the comparison in primitive.cpp.
  bool operator==(const Params& other) const;
};

// The type of a value: what a stand-in knows.
struct TensorType {
  DType dtype;
  Shape shape;
  Placement placement = Placement::host();
  bool operator==(const TensorType&) const = default;
};
inline TensorType type_of(const Tensor& t) { return {t.dtype(), t.shape(), t.placement()}; }
std::string to_string(const TensorType& t);  // "float64 [2, 3]"
using nx::to_string;

// The rules of one primitive, registered by its family's file.
struct Rules {
  // Checks the operands and parameters, throwing std::invalid_argument with
  // the api name first, and gives the result's type.
  TensorType (*type)(Prim, std::span<const Tensor>, const Params&) = nullptr;
  // Computes the result on concrete operands (whose type was checked).
  Tensor (*eager)(Prim, std::span<const Tensor>, const Params&, const TensorType&) = nullptr;
  // The forward derivative: the result's tangent from the operands (primals),
  // their tangents and the result. An undefined tangent is a symbolic zero,
  // in the operands and in what the rule returns. Written with nx functions,
  // so it runs under whatever traces are active (higher order, staging).
  Tensor (*jvp)(Prim, std::span<const Tensor> primals, std::span<const Tensor> tangents, const Params&,
                const Tensor& result) = nullptr;
  // The transpose of a primitive linear in some operands: from the result's
  // cotangent `ct`, the cotangent of each linear operand. `operands` holds
  // the values of the others (fixed) and an undefined handle for each linear
  // one; `types` the types of all. Writes cts[i] for linear operands (an
  // undefined handle: no contribution).
  void (*transpose)(Prim, const Tensor& ct, std::span<const Tensor> operands, std::span<const TensorType> types,
                    const Params&, std::span<Tensor> cts) = nullptr;
  // The batching rule (rune::vmap): the primitive computed for `lanes` lanes
  // at once. A batched operand holds every lane's value along its axis 0; an
  // unbatched one is the same for every lane. Gives the lanes' results along
  // axis 0. Written with nx functions, so it runs under any trace.
  Tensor (*batch)(Prim, std::span<const Tensor> operands, std::span<const bool> batched, const Params&,
                  std::int64_t lanes) = nullptr;
  // The eager rule computing into `out`: a C-order tensor of the result's
  // type whose memory no operand shares (the VM gives the buffers its
  // memory plan chose; `eager` allocates one and calls this). Null where
  // the rule only allocates its result.
  void (*into)(Prim, std::span<const Tensor> operands, const Params&, const Tensor& out) = nullptr;
};
const Rules& rules(Prim p);

// The eager rule of a primitive whose `into` rule computes its result: a
// fresh buffer, computed into.
template <void (*Into)(Prim, std::span<const Tensor>, const Params&, const Tensor&)>
Tensor eager_into(Prim p, std::span<const Tensor> operands, const Params& params, const TensorType& type) {
  Tensor out = make_tensor(type.dtype, type.shape);
  Into(p, operands, params, out);
  return out;
}

// The type of p's result: its type rule, then the result's shape checked
// (ops/sizes.hpp), so no primitive makes a value too large to address.
TensorType result_type(Prim p, std::span<const Tensor> operands, const Params& params);

// The eager rule on concrete operands whose checks have passed and whose
// result type is `type` (the VM's calls: a compiled program is typed).
Tensor apply_eager(Prim p, std::span<const Tensor> operands, const Params& params, const TensorType& type);

// Applies a primitive: the innermost trace that owns an operand processes
// it, and with no trace involved the eager kernel runs (apply_eager).
Tensor bind(Prim p, std::span<const Tensor> operands, const Params& params);
inline Tensor bind(Prim p, std::initializer_list<Tensor> operands, const Params& params = {}) {
  return bind(p, std::span<const Tensor>(operands.begin(), operands.size()), params);
}

// The rules table as the registration functions fill it: each sets only
// the rules it owns, and a rule set twice is an internal error (raised as
// the table is made, at the first bind), so no order of the registrations
// can drop one.
class RuleTable {
 public:
  explicit RuleTable(Rules* rules) : rules_(rules) {}
  // Sets p's rules that `rules` gives (its fields that are not null).
  void define(Prim p, const Rules& rules);

 private:
  Rules* rules_;
};

// The registration functions of the families, called once to fill the table.
void register_elementwise(RuleTable& table);
void register_reductions(RuleTable& table);
void register_layout(RuleTable& table);
void register_linalg(RuleTable& table);
void register_decompositions(RuleTable& table);
void register_random(RuleTable& table);
void register_elementwise_derivatives(RuleTable& table);
void register_reduction_derivatives(RuleTable& table);
void register_layout_derivatives(RuleTable& table);
void register_linalg_derivatives(RuleTable& table);
void register_collectives(RuleTable& table);
void register_ranks(RuleTable& table);
void register_batching(RuleTable& table);

}  // namespace nx::ops
