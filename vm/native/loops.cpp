#include "vm/native/loops.hpp"

#include "ir/program.hpp"
#include "vm/native/native.hpp"

namespace rune::vm::native {

namespace {

// The step's parameters neither carried nor rows: every trip reads them as
// the scan left them.
std::span<const Location> invariant_params(const ScanOp& scan) {
  return std::span(scan.step->params).subspan(std::size_t(scan.info.carry_count + scan.info.xs_count));
}

const ir::IterateInfo& info_of(const Invoke& it) { return std::get<ir::IterateInfo>(it.equation->info); }

// The parameters every trip reads as the loop left them: until's captures
// and the step's.
std::span<const Location> until_invariant(const Invoke& it) {
  const ir::IterateInfo& info = info_of(it);
  return std::span(it.codes[0]->params).subspan(std::size_t(info.carry_count), std::size_t(info.until_captures));
}
std::span<const Location> step_invariant(const Invoke& it) {
  return std::span(it.codes[1]->params).subspan(std::size_t(info_of(it).carry_count) + 1);
}

}  // namespace

const char* scan_refusal(const ScanOp& scan, const Instruction*& culprit) {
  if (const char* why = code_refusal(*scan.step, invariant_params(scan), culprit)) return why;
  return frames_refusal(scan.step->scalar_types.size());
}

const char* iterate_refusal(const Invoke& it, const Instruction*& culprit) {
  if (const char* why = code_refusal(*it.codes[0], until_invariant(it), culprit)) return why;
  if (const char* why = code_refusal(*it.codes[1], step_invariant(it), culprit)) return why;
  return frames_refusal(it.codes[0]->scalar_types.size() + it.codes[1]->scalar_types.size());
}

ScanShape::ScanShape(const ScanOp& scan, std::uint32_t scalars) {
  const Code& step = *scan.step;
  frames.add(step, scalars);
  const std::size_t carry_count = std::size_t(scan.info.carry_count);
  const std::size_t xs_end = carry_count + std::size_t(scan.info.xs_count);
  for (std::size_t k = carry_count; k < xs_end; ++k)
    if (scan.rows_read[k - carry_count]) rows.push_back(step.params[k].index);
  for (std::size_t k = carry_count; k < step.results.size(); ++k) ys.push_back(step.results[k].index);
  add_instructions(frames, 0, events);
  Event end;
  end.reads = ys;
  for (std::size_t k = 0; k < carry_count; ++k) {
    end.reads.push_back(step.results[k].index);
    carry.push_back({step.results[k].index, step.params[k].index});
    carry_params.push_back(step.params[k].index);
  }
  events.push_back(std::move(end));
}

IterateShape::IterateShape(const Invoke& it, std::uint32_t until_scalars, std::uint32_t step_scalars)
    : until(it.codes[0].get()), step(it.codes[1].get()), carry(std::size_t(info_of(it).carry_count)) {
  frames.add(*until, until_scalars);
  frames.add(*step, step_scalars);
  add_instructions(frames, 0, events);
  boundary = events.size();
  Event crossing;
  for (std::size_t k = 0; k < carry; ++k) {
    crossing.reads.push_back(until_key(k));
    crossing.writes.push_back(step_key(k));
  }
  crossing.reads.push_back(stop());
  crossing.writes.push_back(step_key(carry));
  events.push_back(std::move(crossing));
  add_instructions(frames, 1, events);
  Event end;
  for (std::size_t k = 0; k < carry; ++k) {
    end.reads.push_back(frames.key(1, step->results[k].index));
    carry_moves.push_back({frames.key(1, step->results[k].index), until_key(k)});
    carry_params.push_back(until_key(k));
  }
  events.push_back(std::move(end));
}

void IterateShape::cross_boundary(Trip& trip) const {
  for (std::size_t k = 0; k <= carry; ++k)  // (until's values are dead past here)
    trip.pass(k < carry ? until_key(k) : stop(), step_key(k), trip.written(boundary, k));
}

}  // namespace rune::vm::native
