// The VM's part of a NaN hunt (rune::debug_nans; ops/nan_hunt.hpp has the
// eager part): an observer checking what each scalar instruction and fused
// kernel makes (a call's primitive is checked by its eager rule), in effect
// on every thread while the hunt is on and seeing every instruction (no
// machine code meanwhile); the compiler plans no fused kernel meanwhile.
#pragma once

namespace rune::vm {

// Starts or stops the hunt.
void hunt_nans(bool on);

// Starts it when RUNE_DEBUG_NANS=1 (machine.cpp asks at start-up).
bool hunt_nans_from_environment();

}  // namespace rune::vm
