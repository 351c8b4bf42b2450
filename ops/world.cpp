#include "ops/world.hpp"

#include <array>
#include <climits>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <vector>

#include <boost/container/small_vector.hpp>

#if RUNE_MPI
// MPI's C API alone (Open MPI and MPICH would otherwise bring their C++
// bindings, a library of their own).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include "ops/errors.hpp"

namespace nx::ops::world {
namespace {

bool set(const char* variable, std::string_view value) {
  const char* v = std::getenv(variable);
  return v && value == v;
}

// One rank's signature for the divergence check: the collective's name and
// its operand's type, each cut to a fixed width.
constexpr std::size_t name_width = 48, operand_width = 112, signature_width = name_width + operand_width;
using Signature = std::array<char, signature_width>;
constexpr std::string_view finished = "(the end of the program)";

Signature signature(std::string_view api, std::string_view operand) {
  Signature s{};
  std::memcpy(s.data(), api.data(), std::min(api.size(), name_width - 1));
  std::memcpy(s.data() + name_width, operand.data(), std::min(operand.size(), operand_width - 1));
  return s;
}
std::string_view name_in(const char* s) { return s; }
std::string_view operand_in(const char* s) { return s + name_width; }

std::string what_rank_did(std::string_view name) {
  return name == finished ? "finished" : "called " + std::string(name);
}

#if RUNE_MPI
struct World {
  int rank = 0, size = 1;
  MPI_Comm comm = MPI_COMM_NULL;  // rune's own copy of MPI_COMM_WORLD
  MPI_Op sum_from_zero = MPI_OP_NULL;
  bool started_here = false;      // (then finalized at exit)
};

// b = (0 + a) + (0 + b), element by element: the sum of two terms in
// nx::sum's order (each accumulator starts at +0).
template <class T> void add_from_zero(const void* in, void* inout, int n) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < n; ++i) b[i] = (T() + a[i]) + (T() + b[i]);
}
void sum_from_zero(void* in, void* inout, int* n, MPI_Datatype* type) {
  if (*type == MPI_FLOAT) add_from_zero<float>(in, inout, *n);
  else if (*type == MPI_DOUBLE) add_from_zero<double>(in, inout, *n);
  else if (*type == MPI_C_FLOAT_COMPLEX) add_from_zero<std::complex<float>>(in, inout, *n);
  else add_from_zero<std::complex<double>>(in, inout, *n);
}

bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

World& the_world();

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) internal_error("the MPI world", std::string(call) + " failed");
}

int count_of(std::size_t bytes) {
  if (bytes > std::size_t(INT_MAX))
    fail("rune::ranks", "a collective moves at most 2 GiB per rank at once, got " + std::to_string(bytes) + " bytes");
  return int(bytes);
}

// A rank whose exception escapes ends the whole job with its message, so
// that the others do not wait for it forever.
[[noreturn]] void stop_the_job() {
  std::string why = "std::terminate was called";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      why = x.what();
    } catch (...) {
      why = "an exception that is not a std::exception";
    }
  }
  const World& w = the_world();
  std::fprintf(stderr, "rune: rank %d of %d stopped the job: %s\n", w.rank, w.size, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

std::optional<std::string> disagreement(std::string_view api, std::string_view operand);

void finish() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // (by the program, which started MPI itself)
  World& w = the_world();
  if (auto differ = disagreement(finished, "")) {
    std::fprintf(stderr, "rune: rank %d of %d: %s\n", w.rank, w.size, differ->c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Op_free(&w.sum_from_zero);
  MPI_Comm_free(&w.comm);
  if (w.started_here) MPI_Finalize();
}

World start() {
  World w;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) fail("rune::ranks", "MPI was finalized before rune used it");
  if (!initialized && !launched()) return w;  // (a world of one)
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    w.started_here = true;
  }
  check(MPI_Comm_dup(MPI_COMM_WORLD, &w.comm), "MPI_Comm_dup");
  check(MPI_Op_create(&sum_from_zero, 1, &w.sum_from_zero), "MPI_Op_create");
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  return w;
}

World& the_world() {
  static World w = [] {
    World started = start();
    if (started.comm != MPI_COMM_NULL) {
      std::atexit(finish);
      if (started.size > 1) std::set_terminate(stop_the_job);
    }
    return started;
  }();
  return w;
}

MPI_Comm comm() { return the_world().comm; }

std::optional<MPI_Datatype> mpi_type(DType dtype) {
  switch (dtype) {
    case DType::int8: return MPI_INT8_T;
    case DType::int16: return MPI_INT16_T;
    case DType::int32: return MPI_INT32_T;
    case DType::int64: return MPI_INT64_T;
    case DType::uint8: return MPI_UINT8_T;
    case DType::uint32: return MPI_UINT32_T;
    case DType::uint64: return MPI_UINT64_T;
    case DType::float32: return MPI_FLOAT;
    case DType::float64: return MPI_DOUBLE;
    case DType::complex64: return MPI_C_FLOAT_COMPLEX;
    case DType::complex128: return MPI_C_DOUBLE_COMPLEX;
    default: return std::nullopt;  // (bool, float16, bfloat16)
  }
}

// (up to 16 ranks without allocating)
using Counts = boost::container::small_vector<int, 16>;
Counts ints(std::span<const std::size_t> sizes) {
  Counts out;
  for (std::size_t s : sizes) out.push_back(count_of(s));
  return out;
}
#endif

}  // namespace

bool checking() {
  static const bool on = set("RUNE_RANKS_CHECK", "1");
  return on;
}

bool fast_sums() {
  static const bool fast = set("RUNE_RANKS_SUM", "fast");
  return fast;
}

namespace {
// What the first rank whose signature differs from rank 0's did, or nullopt
// where all agree (or the check is off).
std::optional<std::string> disagreement(std::string_view api, std::string_view operand) {
  if (!checking() || size() == 1) return std::nullopt;
  const Signature mine = signature(api, operand);
  std::vector<char> all(signature_width * std::size_t(size()));
  gather(mine.data(), all.data(), signature_width);
  const char* first = all.data();
  for (int r = 1; r < size(); ++r) {
    const char* other = all.data() + std::size_t(r) * signature_width;
    if (std::memcmp(first, other, signature_width) == 0) continue;
    const std::string rank = "rank " + std::to_string(r);
    if (name_in(other) != name_in(first))
      return rank + " " + what_rank_did(name_in(other)) + " where rank 0 " + what_rank_did(name_in(first));
    return rank + " gave " + std::string(operand_in(other)) + " where rank 0 gave " + std::string(operand_in(first));
  }
  return std::nullopt;
}

}  // namespace

#if RUNE_MPI
int rank() { return the_world().rank; }
int size() { return the_world().size; }

void gather(const void* in, void* out, std::size_t bytes) {
  if (size() == 1) return void(std::memmove(out, in, bytes));
  check(MPI_Allgather(in, count_of(bytes), MPI_BYTE, out, count_of(bytes), MPI_BYTE, comm()), "MPI_Allgather");
}

void gather_varying(const void* in, void* out, std::span<const std::size_t> counts,
                    std::span<const std::size_t> offsets) {
  if (size() == 1) return void(std::memmove(static_cast<char*>(out) + offsets[0], in, counts[0]));
  const Counts c = ints(counts), o = ints(offsets);
  check(MPI_Allgatherv(in, c[std::size_t(rank())], MPI_BYTE, out, c.data(), o.data(), MPI_BYTE, comm()),
        "MPI_Allgatherv");
}

void scatter_parts(const void* in, std::span<const std::size_t> counts, std::span<const std::size_t> offsets,
                   void* out, std::size_t received) {
  if (size() == 1) return void(std::memmove(out, static_cast<const char*>(in) + offsets[0], counts[0]));
  const Counts c = ints(counts), o = ints(offsets);
  const Counts in_counts(std::size_t(size()), c[std::size_t(rank())]);
  Counts in_offsets;
  for (int r = 0; r < size(); ++r) in_offsets.push_back(count_of(std::size_t(r) * received));
  check(MPI_Alltoallv(in, c.data(), o.data(), MPI_BYTE, out, in_counts.data(), in_offsets.data(), MPI_BYTE, comm()),
        "MPI_Alltoallv");
}

void exchange(const void* in, int to, void* out, int from, std::size_t bytes) {
  if (to == rank() && from == rank()) return void(std::memmove(out, in, bytes));
  if (size() == 1) return;  // (nothing to send or receive)
  check(MPI_Sendrecv(in, count_of(bytes), MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, 0, out, count_of(bytes), MPI_BYTE,
                     from < 0 ? MPI_PROC_NULL : from, 0, comm(), MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

bool mpi_sum(const void* in, void* out, std::size_t count, DType dtype, bool from_zero) {
  const std::optional<MPI_Datatype> type = mpi_type(dtype);
  if (!type || size() == 1) return false;
  const MPI_Op op = from_zero && is_inexact(dtype) ? the_world().sum_from_zero : MPI_SUM;
  check(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, count_of(count), *type, op, comm()), "MPI_Allreduce");
  return true;
}
#else
int rank() { return 0; }
int size() { return 1; }
void gather(const void* in, void* out, std::size_t bytes) { std::memmove(out, in, bytes); }
void gather_varying(const void* in, void* out, std::span<const std::size_t> counts,
                    std::span<const std::size_t> offsets) {
  std::memmove(static_cast<char*>(out) + offsets[0], in, counts[0]);
}
void scatter_parts(const void* in, std::span<const std::size_t> counts, std::span<const std::size_t> offsets,
                   void* out, std::size_t) {
  std::memmove(out, static_cast<const char*>(in) + offsets[0], counts[0]);
}
void exchange(const void* in, int to, void* out, int from, std::size_t bytes) {
  if (to == 0 && from == 0) std::memmove(out, in, bytes);
}
bool mpi_sum(const void*, void*, std::size_t, DType, bool) { return false; }
#endif

void agree(std::string_view api, std::string_view operand) {
  if (auto differ = disagreement(api, operand)) fail_running(api, *differ);
}

}  // namespace nx::ops::world
