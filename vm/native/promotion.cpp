// When a unit is promoted: RUNE_NATIVE, the work a unit has done, one
// emitter per unit.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "vm/code.hpp"
#include "vm/operands.hpp"
#include "vm/native/native.hpp"

namespace rune::vm::native {

namespace {

// The mode when RUNE_NATIVE is unset: on, except on 64-bit ARM, whose
// emitter has passed the differential tests only under an emulator
// (docs/platforms.md): there the tier runs when asked for.
#if defined(__aarch64__)
constexpr Mode unset = Mode::off;
#else
constexpr Mode unset = Mode::on;
#endif

Mode mode_from_environment() {
  if (!built()) return Mode::off;
  const char* v = std::getenv("RUNE_NATIVE");
  if (!v || !*v) return unset;
  if (std::strcmp(v, "on") == 0) return Mode::on;
  if (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0) return Mode::off;
  if (std::strcmp(v, "eager") == 0) return Mode::eager;
  std::cerr << "rune: RUNE_NATIVE=" << v << " is not off, on or eager; the tier stays on\n";
  return Mode::on;
}

// RUNE_JIT_DEBUG=1: each promotion, and why a unit was not promoted.
bool reporting() {
  const char* v = std::getenv("RUNE_JIT_DEBUG");
  return v && std::atoi(v) != 0;
}

}  // namespace

Mode mode() {
  static const Mode read = mode_from_environment();
  return read;
}

Unit::~Unit() {
  if (const void* done = loop_.load(std::memory_order_acquire)) release(done);
}

const void* Unit::promote(std::int64_t work, Emit emit, const void* what, const char* kind, const char* unit_of_work) {
  const Mode m = mode();
  if (m == Mode::off || state_.load(std::memory_order_relaxed) != idle) return nullptr;
  const std::int64_t done = work_.fetch_add(work, std::memory_order_relaxed) + work;
  if (m == Mode::on && (after_ < 0 || done < after_)) return nullptr;
  std::uint8_t expected = idle;
  if (!state_.compare_exchange_strong(expected, emitting, std::memory_order_acq_rel)) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  const char* why = nullptr;
  const Instruction* culprit = nullptr;
  const void* emitted_loop = emit(what, why, culprit);
  if (reporting()) {
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (emitted_loop)
      std::cerr << "rune native: " << kind << " promoted after " << done << ' ' << unit_of_work
                << " (emitted in " << us << " us)\n";
    else
      std::cerr << "rune native: " << kind << " stays on the VM: " << why
                << (culprit ? " (" + std::string(info(culprit->op).name) + ")" : std::string()) << '\n';
  }
  if (!emitted_loop) {
    state_.store(refused, std::memory_order_release);
    return nullptr;
  }
  loop_.store(emitted_loop, std::memory_order_release);
  state_.store(emitted, std::memory_order_release);
  return emitted_loop;
}

void promote_after(const Code& code, std::int64_t work) {
  for (const FusedKernel& kernel : code.kernels) kernel.native->promote_after(work <= 0 ? work : promoted_elements);
  for (const ScanOp& scan : code.scans) {
    scan.native->promote_after(work);
    promote_after(*scan.step, work);
  }
  for (const Invoke& invoke : code.invokes) {
    invoke.native->promote_after(work);
    for (const auto& sub : invoke.codes) promote_after(*sub, work);
  }
}

}  // namespace rune::vm::native
