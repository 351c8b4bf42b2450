// Walks the primitive table: every primitive has its rules, a kernel for
// every dtype it accepts, and runs on each of them with the result type its
// row states.
#include "helpers.hpp"
#include "ops/errors.hpp"
#include "ops/kernels/kernels.hpp"
#include "ops/primitive.hpp"
#include "primitive_cases.hpp"

#include <functional>
#include <memory>
#include <set>

using nx::Tensor;
using namespace nx::ops;

namespace {
nx::DType result_dtype_for_test(Prim p, nx::DType d) {
  switch (info(p).result) {
    case ResultDType::Bool: return nx::bool_;
    case ResultDType::Real: return d == nx::complex64 ? nx::float32 : d == nx::complex128 ? nx::float64 : d;
    default: return d;
  }
}
}  // namespace

TEST_CASE("every primitive has a unique name, an nx:: api and its rules") {
  std::set<std::string_view> names;
  for (int i = 0; i < prim_count; ++i) {
    const PrimInfo& I = info(Prim(i));
    INFO(I.name);
    CHECK(names.insert(I.name).second);
    CHECK((I.api.starts_with("nx::") || I.api.starts_with("rune::")));
    CHECK(I.accepts != 0);
    CHECK(rules(Prim(i)).type != nullptr);
    // Run on every sample by tests/test_vmap.cpp; the collectives have no
    // eager or batching rule: the map they name computes them
    // (batch/batch_trace.cpp), and bind refuses them where none runs.
    CHECK((rules(Prim(i)).eager != nullptr) == (I.family != Family::collective));
    CHECK((rules(Prim(i)).batch != nullptr) == (I.family != Family::collective));
  }
}

TEST_CASE("the rules table refuses a rule registered twice, whatever the order of the registrations") {
  Rules fresh[prim_count]{};
  RuleTable table(fresh);
  table.define(Prim::add, {.type = rules(Prim::add).type});
  table.define(Prim::add, {.jvp = rules(Prim::add).jvp});  // (another rule of the same primitive: fine)
  CHECK(fresh[int(Prim::add)].type == rules(Prim::add).type);
  CHECK(fresh[int(Prim::add)].jvp == rules(Prim::add).jvp);
  CHECK_THROWS_AS(table.define(Prim::add, {.jvp = rules(Prim::sub).jvp}), std::logic_error);
  CHECK_THROWS_WITH(table.define(Prim::add, {.type = rules(Prim::add).type}),
                    Catch::Contains("the type rule of nx::add is registered twice"));
  CHECK(fresh[int(Prim::add)].jvp == rules(Prim::add).jvp);  // (the first kept)
  // The registrations of the real table, each run alone, set disjoint rules
  // whose union is the table: their order cannot matter.
  auto fields = [](const Rules& r) {
    return std::vector<const void*>{reinterpret_cast<const void*>(r.type), reinterpret_cast<const void*>(r.eager),
                                    reinterpret_cast<const void*>(r.jvp), reinterpret_cast<const void*>(r.transpose),
                                    reinterpret_cast<const void*>(r.batch), reinterpret_cast<const void*>(r.into)};
  };
  std::vector<std::vector<int>> set_by(prim_count, std::vector<int>(6, 0));
  std::vector<std::vector<const void*>> union_of(prim_count, std::vector<const void*>(6, nullptr));
  for (auto registration : {&register_elementwise, &register_reductions, &register_layout, &register_linalg,
                            &register_decompositions, &register_random, &register_elementwise_derivatives,
                            &register_reduction_derivatives, &register_layout_derivatives,
                            &register_linalg_derivatives, &register_collectives, &register_ranks, &register_batching}) {
    Rules alone[prim_count]{};
    RuleTable part(alone);
    registration(part);
    for (int i = 0; i < prim_count; ++i)
      for (std::size_t f = 0; f < 6; ++f)
        if (const void* rule = fields(alone[i])[f]) ++set_by[std::size_t(i)][f], union_of[std::size_t(i)][f] = rule;
  }
  for (int i = 0; i < prim_count; ++i) {
    INFO(info(Prim(i)).name);
    for (std::size_t f = 0; f < 6; ++f) CHECK(set_by[std::size_t(i)][f] <= 1);
    CHECK(union_of[std::size_t(i)] == fields(rules(Prim(i))));
  }
}

TEST_CASE("every primitive has a derivative or is marked as having none; linear ones transpose") {
  for (int i = 0; i < prim_count; ++i) {
    const PrimInfo& I = info(Prim(i));
    INFO(I.name);
    CHECK(rules(Prim(i)).jvp != nullptr);  // NoDiff primitives have one that gives no tangent
    if (I.flags & Linear) CHECK(rules(Prim(i)).transpose != nullptr);
    if (I.flags & NoDiff) CHECK(rules(Prim(i)).jvp(Prim(i), {}, {}, {}, Tensor()).defined() == false);
  }
}

namespace {
// The operand a sample transposes in (the others held fixed): the last float
// one, but the numerator of a division (it is not linear in its divisor).
std::size_t linear_operand(const test::Case& c) {
  if (c.prim == Prim::div) return 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < c.operands.size(); ++i)
    if (nx::is_floating(c.operands[i].dtype())) k = i;
  return k;
}
}  // namespace

// A deleted or broken rule fails here, before any transformation meets it.
TEST_CASE("every rule of every primitive runs on its sample") {
  const std::vector<test::Case> samples = test::samples();
  for (int i = 0; i < prim_count; ++i) {
    INFO(info(Prim(i)).name);
    if (info(Prim(i)).family == Family::collective) continue;  // (test_vmap.cpp)
    CHECK(std::any_of(samples.begin(), samples.end(), [&](const test::Case& c) { return c.prim == Prim(i); }));
  }
  for (const test::Case& c : samples) {
    const Rules& r = rules(c.prim);
    INFO(info(c.prim).name);
    const TensorType type = result_type(c.prim, c.operands, c.params);
    const Tensor y = r.eager(c.prim, c.operands, c.params, type);
    CHECK(type_of(y) == type);
    std::vector<Tensor> tangents;
    for (const Tensor& x : c.operands) tangents.push_back(nx::is_floating(x.dtype()) ? nx::ones_like(x) : Tensor());
    const Tensor tangent = r.jvp(c.prim, c.operands, tangents, c.params, y);
    // Piecewise constant functions have a zero derivative: a symbolic zero.
    const bool zero = c.prim == Prim::sign || c.prim == Prim::floor || c.prim == Prim::ceil || c.prim == Prim::round;
    if ((info(c.prim).flags & NoDiff) || zero) {
      CHECK_FALSE(tangent.defined());
    } else {
      REQUIRE(tangent.defined());
      CHECK(type_of(tangent) == type);
    }
    if (!(info(c.prim).flags & Linear)) continue;
    const std::size_t k = linear_operand(c);
    std::vector<Tensor> fixed = c.operands, cts(c.operands.size());
    std::vector<TensorType> types;
    for (const Tensor& x : c.operands) types.push_back(type_of(x));
    fixed[k] = Tensor();
    r.transpose(c.prim, nx::ones_like(y), fixed, types, c.params, cts);
    REQUIRE(cts[k].defined());
    CHECK(type_of(cts[k]) == types[k]);
  }
}

TEST_CASE("the kernel table has a loop for every accepted dtype") {
  const auto& K = kernels::table();
  INFO("arch " << K.arch);
  for (int i = 0; i < prim_count; ++i)
    for (int d = 0; d < nx::dtype_count; ++d) {
      const PrimInfo& I = info(Prim(i));
      if (!(I.accepts & dtype_class(nx::DType(d)))) continue;
      INFO(I.name << " " << nx::name(nx::DType(d)));
      if (I.family == Family::unary) CHECK(K.unary[i][d] != nullptr);
      if (I.family == Family::binary) CHECK(K.binary[i][d] != nullptr);
      if (I.family == Family::reduce) CHECK(K.reduce[i][d] != nullptr);
      if (I.family == Family::arg) CHECK(K.arg[i][d] != nullptr);
      if (I.family == Family::select) CHECK(K.select[d] != nullptr);
      for (int to = 0; to < nx::dtype_count; ++to) CHECK(K.convert[d][to] != nullptr);
    }
}

TEST_CASE("the rows flagged Simd, and they alone, have SIMD loops for float32 and float64") {
  const auto& K = kernels::table();
  if (std::string_view(K.arch) == "generic") return;  // (RUNE_SIMD=portable: portable loops alone)
  INFO("arch " << K.arch);
  const auto portable = std::make_unique<kernels::Table>();
  kernels::fill_portable(*portable);
  for (int i = 0; i < prim_count; ++i)
    for (nx::DType d : {nx::float32, nx::float64}) {
      const PrimInfo& I = info(Prim(i));
      INFO(I.name << " " << nx::name(d));
      const int k = int(d);
      const bool simd = K.unary[i][k] != portable->unary[i][k] || K.binary[i][k] != portable->binary[i][k] ||
                        K.reduce[i][k] != portable->reduce[i][k];
      CHECK(simd == bool(I.flags & Simd));
    }
}

TEST_CASE("elementwise primitives run on every dtype they accept, and refuse the others") {
  for (int i = 0; i < prim_count; ++i) {
    const PrimInfo& I = info(Prim(i));
    if (I.family != Family::unary && I.family != Family::binary) continue;
    for (int d = 0; d < nx::dtype_count; ++d) {
      const nx::DType dt = nx::DType(d);
      INFO(I.name << " " << nx::name(dt));
      Tensor a = nx::create(dt, {2, 1}, {1, 0}), b = nx::create(dt, {3}, {1, 2, 1});
      auto apply = [&] { return I.family == Family::unary ? bind(Prim(i), {a}) : bind(Prim(i), {a, b}); };
      if (I.accepts & dtype_class(dt)) {
        Tensor r = apply();
        CHECK(r.shape() == (I.family == Family::unary ? nx::Shape{2, 1} : nx::Shape{2, 3}));
        CHECK(r.dtype() == result_dtype_for_test(Prim(i), dt));
      } else {
        CHECK_THROWS_WITH(apply(), StartsWith(std::string(I.api) + ": "));
      }
    }
  }
}

TEST_CASE("reductions run on every dtype they accept") {
  for (int i = 0; i < prim_count; ++i) {
    const PrimInfo& I = info(Prim(i));
    if (I.family != Family::reduce) continue;
    for (int d = 0; d < nx::dtype_count; ++d) {
      const nx::DType dt = nx::DType(d);
      if (!(I.accepts & dtype_class(dt))) continue;
      INFO(I.name << " " << nx::name(dt));
      Params p;
      p.axes = {1};
      Tensor r = bind(Prim(i), {nx::create(dt, {2, 3}, {1, 1, 1, 0, 1, 1})}, p);
      CHECK(r.shape() == nx::Shape{2});
    }
  }
}

TEST_CASE("a user error escaping a rule is an internal error naming the rule") {
  const int line = __LINE__ + 1;
  auto broken_rule = [] { return nx::add(nx::zeros(nx::float64, {2}), nx::zeros(nx::float64, {3})); };
  CHECK_THROWS_MATCHES(call_rule("jvp", "nx::mul", broken_rule), std::logic_error,
                       Catch::Matchers::Message("rune: internal error: the jvp rule of nx::mul: nx::add: shapes [2] "
                                                "and [3] do not broadcast (at test_primitives.cpp:" +
                                                std::to_string(line) + ")"));
}

TEST_CASE("internal_assert: a broken invariant is an internal error naming the check's line") {
  CHECK_NOTHROW(internal_assert(true, "nothing"));
  const int line = __LINE__ + 1;
  CHECK_THROWS_MATCHES(internal_assert(1 + 1 == 3, "arithmetic to hold"), std::logic_error,
                       Catch::Matchers::Message("rune: internal error: test_primitives.cpp:" + std::to_string(line) +
                                                ": expected arithmetic to hold"));
}

// API.md: a user error's message starts with the called function's name. A
// composite nx:: function (written with other nx:: functions) names itself
// in the errors its parts find (ops::EntryPoint): each composite below is
// given a dtype or a shape that one of its parts refuses.
TEST_CASE("every composite nx:: function names itself in its parts' errors") {
  const Tensor b2 = nx::zeros(nx::bool_, {2}), f2 = nx::zeros(nx::float64, {2}), g2 = nx::zeros(nx::float32, {2});
  const Tensor i22 = nx::zeros(nx::int32, {2, 2}), c2 = nx::zeros(nx::complex128, {2});
  const std::vector<std::pair<std::string, std::function<Tensor()>>> composites{
      {"nx::recip", [&] { return nx::recip(b2); }},
      {"nx::square", [&] { return nx::square(b2); }},
      {"nx::sigmoid", [&] { return nx::sigmoid(b2); }},
      {"nx::sigmoid", [&] { return nx::sigmoid(nx::zeros(nx::int32, {2})); }},
      {"nx::clamp", [&] { return nx::clamp(f2, g2, f2); }},
      {"nx::clamp", [&] { return nx::clamp(c2, 0., 1.); }},
      {"nx::matmul", [&] { return nx::matmul(nx::zeros(nx::bool_, {2, 2}), nx::zeros(nx::bool_, {2, 2})); }},
      {"nx::dot", [&] { return nx::dot(f2, g2); }},
      {"nx::dot", [&] { return nx::dot(nx::scalar(nx::bool_, 1), nx::scalar(nx::bool_, 1)); }},
      {"nx::solve", [&] { return nx::solve(i22, nx::zeros(nx::int32, {2})); }},
      {"nx::inv", [&] { return nx::inv(i22); }},
      {"nx::expand_dims", [&] { return nx::expand_dims(f2, nx::Axes(64, 0)); }},  // rank 65
      {"nx::stack", [&] { return nx::stack({f2, g2}); }},
      {"nx::mean", [&] { return nx::mean(nx::zeros(nx::float64, {0, 2}), {0, 0}); }},
      {"nx::logsumexp", [&] { return nx::logsumexp(f2, {3}); }},
      {"nx::segment_sum", [&] { return nx::segment_sum(b2, nx::zeros(nx::int32, {2}), 2); }},
  };
  for (const auto& [name, call] : composites) {
    INFO(name);
    CHECK_THROWS_WITH(call(), StartsWith(name + ": "));
  }
  // (the name lasts as long as the composite's call)
  CHECK_THROWS_WITH(nx::exp(b2), StartsWith("nx::exp: bool [2] is not supported"));
  CHECK_THROWS_WITH(nx::sigmoid(b2), test::Placed("nx::sigmoid: bool [2] is not supported (it takes float or complex tensors)"));
  CHECK_THROWS_WITH(nx::recip(b2),
                    test::Placed("nx::recip: bool [2] is not supported (it takes signed integer, unsigned integer, float or complex "
                    "tensors)"));
}
