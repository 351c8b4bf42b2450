// A sub-program of a construct computed for every lane of a map at once:
// what the batching rules of constructs (root, remat, ...) share.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "batch/batch_trace.hpp"
#include "ir/program.hpp"

namespace rune::constructs {

// A construct's inputs as its batching rule takes them: every lane's values
// (along axis 0 where batched; as they are where the same in every lane).
struct LaneInputs {
  std::vector<nx::Tensor> values;
  std::vector<bool> batched;
};
// The first `stacked` inputs are made batched (broadcast when the same in
// every lane): carries whose lanes may come to differ.
LaneInputs lane_inputs(batch::BatchTrace& map, std::span<const nx::Tensor> inputs, std::size_t stacked = 0);

struct BatchedProgram {
  std::shared_ptr<const ir::Program> program;  // parameters: as given, then `captures`
  std::vector<nx::Tensor> captures;            // values of enclosing traces it reads
  std::vector<bool> results_batched;           // whether each result has the lanes' axis
};

// `program` over every lane's values: parameter i has type types[i], every
// lane's value along axis 0 where batched[i], else the value of all lanes.
// A result is stacked along axis 0 when it differs across lanes, or when
// stack[k] says so (a result past stack's end: not). `prepare` is given the
// map the program is traced under, first.
BatchedProgram batch_program(batch::BatchTrace& map, const ir::Program& program, std::span<const ir::TensorType> types,
                             const std::vector<bool>& batched, const std::vector<bool>& stack = {},
                             const std::function<void(batch::BatchTrace&)>& prepare = {});
// A flag per lane shaped to select between every lane's values of `like`.
nx::Tensor along_lanes(const nx::Tensor& flags, const nx::Tensor& like);
// Every lane's values, `all`, with the row of each lane where `replaced`
// holds replaced by lane `donor`'s (an int32 scalar): a lane that does not
// run computes its donor's values in its place, whose result is dropped. The donor's row is detached, so no
// derivative flows from the dropped result back to the donor.
nx::Tensor from_donor(const nx::Tensor& all, const nx::Tensor& replaced, const nx::Tensor& donor);

// The types of values.
std::vector<ir::TensorType> types_of(std::span<const nx::Tensor> values);

}  // namespace rune::constructs
