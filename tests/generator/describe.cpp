// The description as text: `v3: float64 [2] = nx::sum(v1) axes=[0] flag`.
// Fields are printed when they differ from their defaults; what they mean
// for each kind is listed in description.hpp.
#include <sstream>

#include "functions.hpp"
#include "generator.hpp"

namespace gen {

namespace {

std::string_view kind_name(const Op& op) {
  switch (op.kind) {
    case Kind::constant: return "constant";
    case Kind::unary: return unary_functions()[std::size_t(op.fn)].name;
    case Kind::binary: case Kind::binary_scalar: return binary_functions()[std::size_t(op.fn)].name;
    case Kind::where: case Kind::where_scalar: return "where";
    case Kind::cast: return "cast";
    case Kind::clamp: return "clamp";
    case Kind::reduce: return reduce_functions()[std::size_t(op.fn)].name;
    case Kind::arg: return arg_functions()[std::size_t(op.fn)].name;
    case Kind::reshape: return "reshape";
    case Kind::transpose: return "transpose";
    case Kind::broadcast: return "broadcast_to";
    case Kind::expand_dims: return "expand_dims";
    case Kind::squeeze: return "squeeze";
    case Kind::moveaxis: return "moveaxis";
    case Kind::flatten: return "flatten";
    case Kind::slice: return "slice";
    case Kind::pad: return "pad";
    case Kind::concatenate: return "concatenate";
    case Kind::stack: return "stack";
    case Kind::flip: return "flip";
    case Kind::get: return "get";
    case Kind::take: return "take";
    case Kind::scatter_add: return "scatter_add";
    case Kind::segment_sum: return "segment_sum";
    case Kind::dynamic_slice: return "dynamic_slice";
    case Kind::dynamic_update_slice: return "dynamic_update_slice";
    case Kind::matmul: return "matmul";
    case Kind::dot: return "dot";
    case Kind::solve: return "solve";
    case Kind::inv: return "inv";
    case Kind::cholesky: return "cholesky";
    case Kind::detach: return "rune::detach";
    case Kind::random: {
      static constexpr std::string_view names[] = {"nx::random::uniform", "nx::random::normal", "nx::random::split",
                                                   "nx::random::bits"};
      return names[std::size_t(op.fn)];
    }
    case Kind::scan: return "rune::scan";
    case Kind::iterate: return "rune::iterate";
    case Kind::cond: return "rune::cond";
    case Kind::switch_: return "rune::switch_";
    case Kind::remat: return "rune::remat";
    case Kind::collect: return "rune::collect";
    case Kind::total_add: return "rune::Total::add";
    case Kind::map: return "rune::vmap";
    case Kind::lanes: return "rune::lanes";
    case Kind::check: return "nx::check";
  }
  return "?";
}

std::string type_text(const Type& t) { return std::string(nx::name(t.dtype)) + " " + nx::to_string(t.shape); }

std::string fields(const Op& op) {
  std::ostringstream s;
  s.precision(17);
  auto list = [&](const char* name, const nx::Shape& v) {
    if (!v.empty()) s << " " << name << "=" << nx::to_string(v);
  };
  list("shape", op.shape), list("starts", op.starts), list("stops", op.stops), list("steps", op.steps);
  list("axes", op.axes);
  for (auto [lo, hi] : op.widths) s << " (" << lo << ", " << hi << ")";
  if (op.kind == Kind::cast || op.kind == Kind::random) s << " dtype=" << nx::name(op.dtype);
  if (op.value != 0 || op.upper != 0) s << " value=" << op.value << " upper=" << op.upper;
  if (op.flag) s << " flag";
  if (op.kind == Kind::total_add) s << " total=" << op.axis;  // (0: the outermost open collect's)
  else if (op.kind == Kind::map) s << " lanes=" << op.axis << " mapped=" << op.carries;
  else if (op.axis != 0 || op.to != 0) s << " axis=" << op.axis << " to=" << op.to;
  if (op.constant.defined()) s << " " << nx::to_string(op.constant);
  if (op.kind == Kind::scan) s << " carries=" << op.carries << " xs=" << op.xs;
  if (op.kind == Kind::iterate) s << " max=" << op.max << " carries=" << op.carries << " until_captures=" << op.xs;
  if (op.kind == Kind::remat) s << " arguments=" << op.carries;
  return s.str();
}

// What each of an operation's blocks is, for the listing.
std::string block_label(const Op& op, std::size_t k) {
  switch (op.kind) {
    case Kind::iterate: return k == 0 ? "until" : "step";
    case Kind::cond: return k == 0 ? "then" : "else";
    case Kind::switch_: {
      std::string s = "branch ";
      return s += std::to_string(k);
    }
    default: return "body";
  }
}

void print(const Block& block, int indent, const std::string& label, std::ostringstream& out) {
  const std::string pad(std::size_t(indent), ' ');
  auto name = [](int v) {
    std::string s(1, 'v');  // (not "v" + to_string: GCC 12 warns falsely on that)
    return s += std::to_string(v);
  };
  out << pad << label << "(";
  for (int v = 0; v < block.params; ++v) out << (v ? ", " : "") << name(v) << ": " << type_text(block.types[std::size_t(v)]);
  out << ")\n";
  for (const Op& op : block.ops) {
    out << pad << "  ";
    for (std::size_t k = 0; k < op.out.size(); ++k)
      out << (k ? ", " : "") << name(op.out[k]) << ": " << type_text(block.types[std::size_t(op.out[k])]);
    out << " = " << kind_name(op) << "(";
    for (std::size_t k = 0; k < op.in.size(); ++k) out << (k ? ", " : "") << name(op.in[k]);
    out << ")" << fields(op) << "\n";
    if (op.step) print(*op.step, indent + 4, "step ", out);
    for (std::size_t k = 0; k < op.blocks.size(); ++k) print(*op.blocks[k], indent + 4, block_label(op, k) + " ", out);
  }
  out << pad << "  return";
  for (int v : block.results) out << " " << name(v);
  out << "\n";
}

}  // namespace

std::string to_string(const Block& block) {
  std::ostringstream out;
  print(block, 0, "", out);
  return out.str();
}

}  // namespace gen
