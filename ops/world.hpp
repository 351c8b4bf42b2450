// The processes of an MPI job, seen as one axis (rune::ranks()): who this
// process is, and the byte exchanges the ranks primitives are made of
// (ops/family_ranks.cpp does every addition itself, so sums keep nx::sum's
// order). Only world.cpp includes MPI.
//
// MPI is used where the program was started by a launcher (mpiexec sets
// OMPI_COMM_WORLD_SIZE, or PMI_SIZE under MPICH's) or has started MPI
// itself; rune then starts it on first use (MPI_Init_thread, asking for
// MPI_THREAD_MULTIPLE) and finalizes it at exit, unless the program
// started it. Elsewhere, and in a build without MPI (-Dmpi=disabled), the
// world is one process: rank 0 of 1.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "rune/dtype.hpp"

namespace nx::ops::world {

int rank();
int size();

// Every rank's `bytes` bytes of `in`, end to end in rank order in `out`.
void gather(const void* in, void* out, std::size_t bytes);
// Like gather, each rank giving counts[r] bytes, placed at offsets[r] of out.
void gather_varying(const void* in, void* out, std::span<const std::size_t> counts,
                    std::span<const std::size_t> offsets);
// Rank r gets the counts[r] bytes of `in` at offsets[r]; from every rank q,
// this rank's part lands `received` bytes apart in `out`, in rank order.
void scatter_parts(const void* in, std::span<const std::size_t> counts, std::span<const std::size_t> offsets,
                   void* out, std::size_t received);
// Sends `bytes` of `in` to rank `to` while receiving `bytes` from rank `from`
// into `out` (-1: no send, or no receive).
void exchange(const void* in, int to, void* out, int from, std::size_t bytes);
// Whether RUNE_RANKS_SUM=fast asks for MPI's own order of addition (read once).
bool fast_sums();
// MPI_Allreduce's sum (MPI_SUM, in MPI's order) where MPI has the element
// type and there are several ranks; false where it does not apply. With
// `from_zero` (float and complex dtypes), each addition of two values is
// (0 + a) + (0 + b): on two ranks, the fixed order's sum of two terms.
bool mpi_sum(const void* in, void* out, std::size_t count, DType dtype, bool from_zero = false);

// Whether the divergence check is on (RUNE_RANKS_CHECK=1, read once).
bool checking();
// The divergence check: every rank says which
// collective it is about to call (`api`) and on what (`operand`), and all
// compare. Where they differ it throws on every rank, naming the first
// rank that differs from rank 0: "rune::psum: rank 1 called rune::psum
// where rank 0 called rune::all_gather". A rank that reaches the end of
// the program is "finished". Does nothing when the check is off.
void agree(std::string_view api, std::string_view operand);

}  // namespace nx::ops::world
