// The umbrella header: nx (tensors) and rune (transformations, constructs).
#pragma once

#include "rune/nx.hpp"
#include "rune/tree.hpp"
