// The shapes of a scan's and an iterate's loops, the same on every machine:
// their frames, the events of one trip (trip.hpp) and the carry. Each
// machine's emitter (x86/, a64/) writes the loop around them.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "vm/native/trip.hpp"

namespace rune::vm::native {

// Why this machine's emitter cannot address frames of `scalars` scalars
// in all, or null (each emitter defines it: x86-64 reaches any frame).
const char* frames_refusal(std::size_t scalars);

// A scan's trip: the xs rows it reads, its step's instructions, the ys
// rows it writes and the carry moved (its end reads the ys and the carry).
struct ScanShape {
  // (scalars: the general register holding the step frame's scalars)
  ScanShape(const ScanOp& scan, std::uint32_t scalars);
  Frames frames;
  std::vector<std::int32_t> rows, ys;  // the parameters of the xs rows read; the ys results
  std::vector<std::pair<std::int32_t, std::int32_t>> carry;  // (result, parameter)
  std::vector<std::int32_t> carry_params;
  std::vector<Event> events;
};

// An iterate's trip: until's instructions, a boundary where the carry and
// the stop pass to the step, the step's instructions, an end reading the
// step's carry out.
struct IterateShape {
  // (until_scalars, step_scalars: the general registers holding the frames)
  IterateShape(const Invoke& it, std::uint32_t until_scalars, std::uint32_t step_scalars);
  std::int32_t until_key(std::size_t k) const { return frames.key(0, until->params[k].index); }
  std::int32_t step_key(std::size_t k) const { return frames.key(1, step->params[k].index); }
  std::int32_t stop() const { return frames.key(0, until->results[0].index); }
  // The step's carry parameters take until's values (no code when they are
  // in registers); the stop is copied.
  void cross_boundary(Trip& trip) const;
  const Code *until, *step;
  std::size_t carry;
  Frames frames;
  std::size_t boundary = 0;  // the boundary's event
  std::vector<std::pair<std::int32_t, std::int32_t>> carry_moves;  // (the step's result, until's parameter)
  std::vector<std::int32_t> carry_params;  // until's
  std::vector<Event> events;
};

}  // namespace rune::vm::native
