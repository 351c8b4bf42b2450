// The demo's figures, drawn from its tensors with the SVG writer.
#pragma once

#include <string>
#include <vector>

#include "flight.hpp"

namespace plots {

// The flight's path without thrust and with the planned thrust (every flight
// figure draws the ground, the target and its landing zone).
void flights(const std::string& file, const flight::Vector& unplanned, const flight::Vector& planned);
// The plan: each step's thrust (float64 [2, steps], the x row and the y row).
void thrust(const std::string& file, const nx::Tensor& plan);
// The loss before each step of the optimizer, on a log scale.
void loss_curve(const std::string& file, const std::vector<double>& losses);
// The planned flight's paths in many winds (each component [winds, steps])
// and in the wind it was planned for; `landed` of them end in the zone.
void fan(const std::string& file, const flight::Vector& paths, const flight::Vector& planned, int landed);

}  // namespace plots
