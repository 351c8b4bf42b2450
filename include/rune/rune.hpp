// The umbrella header: nx (tensors) and rune (transformations, constructs).
#pragma once

#include "rune/nx.hpp"
#include "rune/callback.hpp"
#include "rune/check.hpp"
#include "rune/cond.hpp"
#include "rune/custom.hpp"
#include "rune/grad.hpp"
#include "rune/iterate.hpp"
#include "rune/jit.hpp"
#include "rune/load.hpp"
#include "rune/program.hpp"
#include "rune/remat.hpp"
#include "rune/root.hpp"
#include "rune/scan.hpp"
#include "rune/total.hpp"
#include "rune/tree.hpp"
#include "rune/vmap.hpp"
