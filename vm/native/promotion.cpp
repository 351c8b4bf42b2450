// When a unit is promoted: RUNE_NATIVE, the rows a scan has run, one
// emitter per unit.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "vm/code.hpp"
#include "vm/listing.hpp"
#include "vm/native/native.hpp"

namespace rune::vm::native {

namespace {

Mode mode_from_environment() {
  if (!built()) return Mode::off;
  const char* v = std::getenv("RUNE_NATIVE");
  if (!v || !*v || std::strcmp(v, "on") == 0) return Mode::on;
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

ScanUnit::~ScanUnit() {
  if (ScanLoop done = loop_.load(std::memory_order_acquire)) release(done);
}

ScanLoop ScanUnit::promote(const ScanOp& scan, std::int64_t length) {
  const Mode m = mode();
  if (m == Mode::off || state_.load(std::memory_order_relaxed) != idle) return nullptr;
  const std::int64_t rows = rows_.fetch_add(length, std::memory_order_relaxed) + length;
  if (m == Mode::on && rows < promoted_rows) return nullptr;
  std::uint8_t expected = idle;
  if (!state_.compare_exchange_strong(expected, emitting, std::memory_order_acq_rel)) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  const char* why = nullptr;
  const Instruction* culprit = nullptr;
  const ScanLoop emitted_loop = emit_scan(scan, why, culprit);
  if (reporting()) {
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (emitted_loop)
      std::cerr << "rune native: a scan step of " << scan.step->instructions.size() << " instructions promoted after "
                << rows << " rows (emitted in " << us << " us)\n";
    else
      std::cerr << "rune native: a scan step stays on the VM: " << why
                << (culprit ? " (" + instruction_text(*scan.step, *culprit) + ")" : std::string()) << '\n';
  }
  if (!emitted_loop) {
    state_.store(refused, std::memory_order_release);
    return nullptr;
  }
  loop_.store(emitted_loop, std::memory_order_release);
  state_.store(emitted, std::memory_order_release);
  return emitted_loop;
}

}  // namespace rune::vm::native
