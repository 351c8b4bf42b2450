#!/usr/bin/env bash
# Runs rune's benchmarks (W1 to W9: W1 eager per-op overhead, W2 Lorenz-63 scan and gradient, W3
# elementwise, W4 MLP training, W5 Newton's square root under vmap, W6 the cost of a compiled call,
# W7 a game's frame, W8 the cloth: gathers and scatters by index, W9 psum across the two ranks of an
# MPI job against MPI_Allreduce) and the peers' programs for the same
# workloads in one run, then writes bench/RESULTS.md.
#
#   bash bench/run.sh BUILD_DIR        (`make bench` runs `bash bench/run.sh build`)
#
# BUILD_DIR is a meson build folder of this repository; the option `bench` is
# switched on there if it is off. The peers (bench/peers, or $RUNE_PEERS)
# are built into BUILD_DIR/peers; a peer whose
# folder, compiler, library or Python module is missing is skipped with a note.
# Environment: RUNE_PEERS (peers folder), BENCH_JOBS (ninja -j, default 1), BENCH_ONLY
# (workloads to run, e.g. "W4"; default "W1 W2 W3 W4 W5 W6 W7 W8 W9"),
# PYTHON (default /usr/bin/python3), BENCH_RESULTS (output, default bench/RESULTS.md),
# BENCH_WAIT_IDLE (seconds to wait for other processes to finish, default 30), BENCH_BUDGET
# (seconds after which run.sh stops waiting and rerunning disturbed programs, default 300),
# BENCH_ROUNDS (how many times every program runs, default 3).
# Takes about 8-11 minutes (W8 alone about 1 minute a round; plus ~2 min, once, to compile the five libtorch peers). The W2
# peers that take tens of seconds a run (libtorch and PyTorch eager loops, torch.jit.script)
# run in round 1 only.
set -u
set -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -lt 1 ]; then
  echo "usage: bash bench/run.sh BUILD_DIR" >&2
  exit 2
fi
invocation="bash bench/run.sh $1"
build_arg=$1
case "$build_arg" in /*) build=$build_arg ;; *) build=$PWD/$build_arg ;; esac
if [ ! -f "$build/build.ninja" ]; then
  echo "run.sh: $build is not a meson build folder (meson setup $build_arg first)" >&2
  exit 2
fi
build=$(cd "$build" && pwd)
peers=${RUNE_PEERS:-$here/peers}
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3 || true)
results=${BENCH_RESULTS:-$here/RESULTS.md}
jobs=${BENCH_JOBS:-1}
rounds=${BENCH_ROUNDS:-3}
pbuild=$build/peers
raw=$build/bench-raw.log
mkdir -p "$pbuild"
: > "$raw"

log() { echo "$*" | tee -a "$raw"; }
skip() { log "# SKIP: $*"; }
# CPU time (clock ticks) used by the whole machine, and by this shell's finished children.
busy_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8; exit}' /proc/stat 2>/dev/null || echo 0; }
# (pass $BASHPID: inside $(...) it would name the substitution's own subshell)
child_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $14 + $15}' || echo 0; }
# run LABEL TIMEOUT CMD...: runs a benchmark program and appends its output to the raw
# log, followed by a "# cpu:" line: wall time, CPU used by the program, CPU used by
# everything else meanwhile (other processes on this 2-core machine disturb the
# measurements). A disturbed run (others > 25% of the wall time) is discarded and
# the program run once more after the machine goes idle; the second run is kept.
# No more waiting or reruns once the rounds have taken BENCH_BUDGET seconds (default 200).
run() {
  local label=$1 limit=$2
  shift 2
  local attempt rc t0 b0 c0 t1 b1 c1 me=$BASHPID line tmp=$pbuild/.run.out
  for attempt in 1 2; do
    echo ">> $label" >&2
    t0=$(date +%s.%N); b0=$(busy_ticks); c0=$(child_ticks "$me")
    timeout "$limit" "$@" > "$tmp" 2>&1
    rc=$?
    t1=$(date +%s.%N); b1=$(busy_ticks); c1=$(child_ticks "$me")
    line=$(awk -v l="$label" -v t0="$t0" -v t1="$t1" -v b="$((b1 - b0))" -v c="$((c1 - c0))" \
      -v hz="$(getconf CLK_TCK)" 'BEGIN { o = (b - c) / hz; if (o < 0) o = 0; w = t1 - t0;
        printf "# cpu: %s: wall %.1f s, program %.1f s, others %.1f s%s\n", l, w, c / hz, o,
               (o > 0.25 * w && o > 0.3) ? " (disturbed)" : "" }')
    if [ "$attempt" = 1 ] && [[ "$line" == *"(disturbed)" ]] && [ "$(date +%s)" -lt "$deadline" ]; then
      echo "# discarded a disturbed run: ${line#\# cpu: }; running it again" >> "$raw"
      wait_idle
      continue
    fi
    break
  done
  echo "# --- $label" >> "$raw"
  cat "$tmp" | tee -a "$raw"
  echo "$line" >> "$raw"
  rm -f "$tmp"
  if [ "$rc" -ne 0 ]; then log "# FAILED: $label exited with status $rc"; fi
  return 0
}

# Other processes on a 2-core machine spoil the numbers: wait (up to BENCH_WAIT_IDLE
# seconds, default 30) until less than a fifth of a core is busy over 2 s.
wait_idle() {
  local limit=${BENCH_WAIT_IDLE:-30} waited=0 b0 b1 left=$((deadline - $(date +%s)))
  [ "$left" -lt "$limit" ] && limit=$left
  [ "$limit" -le 0 ] && return 0
  while :; do
    b0=$(busy_ticks); sleep 2; b1=$(busy_ticks)
    if [ $((b1 - b0)) -le $(( $(getconf CLK_TCK) * 2 / 5 )) ]; then break; fi
    if [ "$waited" -ge "$limit" ]; then
      log "# machine still busy after waiting ${waited} s (other processes); measuring anyway"
      return
    fi
    [ "$waited" = 0 ] && echo ">> waiting for the machine to go idle (up to ${limit} s)" >&2
    waited=$((waited + 2))
  done
  [ "$waited" -gt 0 ] && log "# waited ${waited} s for the machine to go idle"
  return 0
}

start=$(date +%s)
log "# run: $invocation (in $PWD); started $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
dirty=$(git -C "$here/.." status --porcelain 2>/dev/null | wc -l)
log "# tree: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), $dirty uncommitted path(s)"

# ---- rune's programs
if [ "$(meson introspect --buildoptions "$build" 2>/dev/null | "${py:-python3}" -c \
  'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="bench"][0])' 2>/dev/null)" = "False" ]; then
  echo ">> meson configure $build -Dbench=true" >&2
  meson configure "$build" -Dbench=true >/dev/null || { echo "run.sh: meson configure failed" >&2; exit 1; }
fi
targets=(bench/bench_w1 bench/bench_w2 bench/bench_w3 bench/bench_w4 bench/bench_w5 bench/bench_w6 bench/bench_w7 bench/bench_w8)
echo ">> ninja -C $build -j$jobs ${targets[*]}" >&2
if ! ninja -C "$build" -j"$jobs" "${targets[@]}" >&2; then
  echo "run.sh: building the benchmarks failed" >&2
  exit 1
fi

# ---- the peers' C++ programs (flags from the peers' Makefile)
have_peers=0
if [ -d "$peers/cpp" ] && [ -d "$peers/py" ]; then
  have_peers=1
  peers=$(cd "$peers" && pwd)
  log "# peers: $peers"
else
  skip "peers folder not found at $peers (set RUNE_PEERS); every peer row is skipped"
fi
cxx=${CXX:-g++}
# build NAME SOURCE FLAGS... [-- LIBS...]: compiles a peer unless its binary is newer
# than its sources (libraries go after the source, as in the peers' Makefile). SOURCE is
# relative to the peers' cpp/ folder, or an absolute path (our own peer programs in
# bench/, which include bench/bench.hpp).
build_peer() {
  local name=$1 src=$peers/cpp/$2
  case "$2" in /*) src=$2 ;; esac
  local hdr
  hdr=$(dirname "$src")/bench.hpp
  shift 2
  local flags=() libs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  libs=("$@")
  local out=$pbuild/$name
  if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$hdr" ]; then return 0; fi
  echo ">> $cxx ${flags[*]} $src ${libs[*]} -o $out" >&2
  "$cxx" "${flags[@]}" "$src" "${libs[@]}" -o "$out.tmp" 2> "$pbuild/$name.err" && mv "$out.tmp" "$out" && return 0
  rm -f "$out.tmp"
  return 1
}
peer_ok() { [ "$have_peers" = 1 ] && [ -x "$pbuild/$1" ]; }
if [ "$have_peers" = 1 ]; then
  if ! command -v "$cxx" >/dev/null; then
    skip "no C++ compiler ($cxx): C++ peers skipped"
  else
    build_peer w1_floor w1_floor.cpp -O2 -ffp-contract=off -std=c++17 || skip "w1_floor did not compile (see $pbuild/w1_floor.err)"
    build_peer w2_floor w2_floor.cpp -O2 -ffp-contract=off -std=c++17 || skip "w2_floor did not compile (see $pbuild/w2_floor.err)"
    build_peer w3_floor w3_floor.cpp -O3 -march=native -std=c++17 || skip "w3_floor did not compile (see $pbuild/w3_floor.err)"
    build_peer w3_floor_omp w3_floor.cpp -O3 -march=native -fopenmp -std=c++17 ||
      skip "w3_floor_omp (OpenMP) did not compile (see $pbuild/w3_floor_omp.err)"
    build_peer w5_floor w5_floor.cpp -O3 -march=native -fopenmp -std=c++17 ||
      skip "w5_floor (OpenMP) did not compile (see $pbuild/w5_floor.err)"
    if [ -f /usr/include/torch/csrc/api/include/torch/torch.h ]; then
      build_peer w1_libtorch w1_libtorch.cpp -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
        -- -ltorch -ltorch_cpu -lc10 || skip "w1_libtorch did not compile (see $pbuild/w1_libtorch.err)"
      build_peer w2_libtorch w2_libtorch.cpp -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
        -- -ltorch -ltorch_cpu -lc10 || skip "w2_libtorch did not compile (see $pbuild/w2_libtorch.err)"
      build_peer w6_libtorch w6_libtorch.cpp -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
        -- -ltorch -ltorch_cpu -lc10 || skip "w6_libtorch did not compile (see $pbuild/w6_libtorch.err)"
      build_peer w4_libtorch w4_libtorch.cpp -O2 -std=c++17 -I/usr/include/torch/csrc/api/include \
        -- -ltorch -ltorch_cpu -lc10 || skip "w4_libtorch did not compile (see $pbuild/w4_libtorch.err)"
      build_peer w4_grad_libtorch "$here/peer_w4_grad_libtorch.cpp" -O2 -std=c++17 \
        -I/usr/include/torch/csrc/api/include -- -ltorch -ltorch_cpu -lc10 ||
        skip "w4_grad_libtorch (bench/peer_w4_grad_libtorch.cpp) did not compile (see $pbuild/w4_grad_libtorch.err)"
    else
      skip "libtorch headers not installed (libtorch-dev): libtorch C++ peer skipped"
    fi
  fi
fi
has_mod() { [ -n "$py" ] && "$py" -c "import $1" >/dev/null 2>&1; }
py_np=0; py_torch=0; py_numba=0; py_numexpr=0
if [ "$have_peers" = 1 ]; then
  if [ -z "$py" ]; then skip "no python3: Python peers skipped"; fi
  has_mod numpy && py_np=1 || skip "numpy not importable by $py: numpy peers skipped"
  has_mod torch && py_torch=1 || skip "torch not importable by $py: PyTorch peers skipped"
  has_mod numba && py_numba=1 || skip "numba not importable by $py: the Numba W2, W3, W5 and W6 peers skipped"
  has_mod numexpr && py_numexpr=1 || skip "numexpr not importable by $py: the numexpr W3 peer skipped"
fi
# pyrun LABEL TIMEOUT ARGS...: a Python peer, run from the peers' py/ folder (imports common.py).
pyrun() {
  local label=$1 limit=$2
  shift 2
  (cd "$peers/py" && PEERS_PY="$peers/py" run "$label" "$limit" "$py" "$@")
}
# The PyTorch W4 peers also run with OpenMP's threads sleeping instead of spinning when idle:
# in the default environment libgomp's spinning threads and OpenBLAS's pthreads fight over
# the 2 cores (the peers' README, W4); BENCH_TAG labels those rows.
passive=(env OMP_WAIT_POLICY=PASSIVE BENCH_TAG=OMP_WAIT_POLICY=PASSIVE)
pyrun_passive() {
  local label=$1 limit=$2
  shift 2
  (cd "$peers/py" && PEERS_PY="$peers/py" run "$label" "$limit" "${passive[@]}" "$py" "$@")
}

# ---- the rounds: every program once per round; RESULTS.md gives the median of the
# rounds' medians (as the peers' summarize.py does) and their range.
py_both=0
if [ "$have_peers" = 1 ]; then
  if [ "$py_np" = 1 ] && [ "$py_torch" = 1 ]; then py_both=1
  else skip "w1_eager.py and w3_elementwise.py (numpy and PyTorch rows) need both numpy and torch"; fi
fi
w1_round() {
  run "rune W1" 120 "$build/bench/bench_w1"
  peer_ok w1_floor && run "w1_floor" 120 "$pbuild/w1_floor"
  peer_ok w1_libtorch && run "w1_libtorch" 120 "$pbuild/w1_libtorch"
  [ "$py_both" = 1 ] && pyrun "w1_eager.py" 180 w1_eager.py
  return 0
}
w2_round() {
  run "rune W2" 240 "$build/bench/bench_w2"
  run "rune W2 (VM alone)" 240 env RUNE_NATIVE=off "$build/bench/bench_w2"
  peer_ok w2_floor && run "w2_floor" 120 "$pbuild/w2_floor"
  if [ "$have_peers" = 1 ] && [ "$py_numba" = 1 ]; then
    pyrun "w_jit_peers.py w2" 120 w_jit_peers.py w2
    pyrun "peer_w2_first_call.py numba" 120 "$here/peer_w2_first_call.py" numba
  fi
  # The slow peers (tens of seconds per run): round 1 only.
  if [ "$round" = 1 ]; then
    peer_ok w2_libtorch && run "w2_libtorch" 240 "$pbuild/w2_libtorch"
    [ "$py_both" = 1 ] && pyrun "w2_lorenz.py all" 300 w2_lorenz.py all
    [ "$have_peers" = 1 ] && [ "$py_torch" = 1 ] &&
      pyrun "peer_w2_first_call.py torchjit" 180 "$here/peer_w2_first_call.py" torchjit
  fi
  return 0
}
w3_round() {
  run "rune W3" 180 "$build/bench/bench_w3"
  peer_ok w3_floor && run "w3_floor" 180 "$pbuild/w3_floor"
  peer_ok w3_floor_omp && run "w3_floor_omp" 180 "$pbuild/w3_floor_omp"
  if [ "$py_both" = 1 ]; then  # w3_elementwise.py imports torch even for its numpy mode
    pyrun "w3_elementwise.py numpy" 180 w3_elementwise.py numpy
    pyrun "w3_elementwise.py eager 2" 180 w3_elementwise.py eager 2
    pyrun "w3_elementwise.py eager 1" 180 w3_elementwise.py eager 1
  fi
  [ "$have_peers" = 1 ] && [ "$py_np" = 1 ] && pyrun "peer_w3_add.py numpy" 120 "$here/peer_w3_add.py" numpy
  if [ "$py_both" = 1 ]; then
    pyrun "peer_w3_add.py eager 2" 120 "$here/peer_w3_add.py" eager 2
    pyrun "peer_w3_add.py eager 1" 120 "$here/peer_w3_add.py" eager 1
  fi
  # numexpr (1 and 2 threads) and Numba's parallel loop on the same chain (w_jit_peers.py imports both)
  if [ "$have_peers" = 1 ] && [ "$py_numexpr" = 1 ] && [ "$py_numba" = 1 ]; then
    pyrun "w_jit_peers.py w3" 180 w_jit_peers.py w3
  fi
  return 0
}
w4_round() {
  run "rune W4" 120 "$build/bench/bench_w4"
  peer_ok w4_libtorch && run "w4_libtorch" 240 "$pbuild/w4_libtorch"
  peer_ok w4_libtorch && run "w4_libtorch PASSIVE" 120 "${passive[@]}" "$pbuild/w4_libtorch"
  peer_ok w4_grad_libtorch && run "peer_w4_grad_libtorch" 240 "$pbuild/w4_grad_libtorch"
  peer_ok w4_grad_libtorch && run "peer_w4_grad_libtorch PASSIVE" 120 "${passive[@]}" "$pbuild/w4_grad_libtorch"
  if [ "$py_both" = 1 ]; then  # w4_mlp.py uses numpy and torch
    pyrun "w4_mlp.py" 240 w4_mlp.py
    pyrun_passive "w4_mlp.py PASSIVE" 120 w4_mlp.py
  fi
  if [ "$have_peers" = 1 ] && [ "$py_torch" = 1 ]; then
    pyrun "peer_w4_grad.py" 240 "$here/peer_w4_grad.py"
    pyrun_passive "peer_w4_grad.py PASSIVE" 120 "$here/peer_w4_grad.py"
  fi
  return 0
}
w5_round() {
  run "rune W5" 240 "$build/bench/bench_w5"
  peer_ok w5_floor && run "w5_floor" 120 "$pbuild/w5_floor"
  [ "$py_both" = 1 ] && pyrun "w5_newton.py" 240 w5_newton.py
  [ "$have_peers" = 1 ] && [ "$py_numba" = 1 ] && pyrun "w_jit_peers.py w5" 240 w_jit_peers.py w5
  return 0
}
w6_round() {
  run "rune W6" 120 "$build/bench/bench_w6"
  # w6_call.py also writes the TorchScript modules that w6_libtorch loads.
  if [ "$have_peers" = 1 ] && [ "$py_torch" = 1 ]; then
    pyrun "w6_call.py" 180 w6_call.py "$pbuild/w6_f.pt"
    peer_ok w6_libtorch && [ -f "$pbuild/w6_f.pt" ] && run "w6_libtorch" 120 "$pbuild/w6_libtorch" "$pbuild/w6_f.pt"
  fi
  [ "$have_peers" = 1 ] && [ "$py_numba" = 1 ] && pyrun "w_jit_peers.py w6" 120 w_jit_peers.py w6
  return 0
}
# W7 has no peers: its baseline, the plain C++ step, is in bench_w7 itself.
w7_round() {
  run "rune W7" 120 "$build/bench/bench_w7"
  return 0
}
# W8 has no peers either: its baselines, the plain C++ loops, are in bench_w8 (about 50 s a run).
w8_round() {
  run "rune W8" 180 "$build/bench/bench_w8"
  return 0
}
# W9: ranks under mpiexec, one per core: psum against MPI_Allreduce (in bench_w9 itself; again
# with RUNE_RANKS_SUM=fast), data-parallel training against PyTorch DDP over gloo (the peer
# bench/peer_w9_ddp.py), an ensemble on 1 and 2 ranks. Skipped in a build without MPI.
w9_round() {
  if [ ! -x "$build/bench/bench_w9" ] || ! command -v mpiexec > /dev/null; then
    skip "W9: no MPI in this build (meson -Dmpi, Open MPI's mpiexec)"
    return 0
  fi
  local mpi=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec --bind-to core)
  run "rune W9 psum" 300 "${mpi[@]}" -n 2 "$build/bench/bench_w9" psum
  run "rune W9 psum fast" 300 env RUNE_RANKS_SUM=fast "${mpi[@]}" -n 2 "$build/bench/bench_w9" psum
  run "rune W9 train" 300 "${mpi[@]}" -n 2 "$build/bench/bench_w9" train
  run "rune W9 ensemble, 1 rank" 300 "${mpi[@]}" -n 1 "$build/bench/bench_w9" ensemble
  run "rune W9 ensemble, 2 ranks" 300 "${mpi[@]}" -n 2 "$build/bench/bench_w9" ensemble
  [ "$have_peers" = 1 ] && [ "$py_torch" = 1 ] && pyrun "peer_w9_ddp.py" 300 "$here/peer_w9_ddp.py"
  return 0
}
# BENCH_ONLY (e.g. "W4" or "W1 W3"): only these workloads' rounds (all by default).
only=${BENCH_ONLY:-W1 W2 W3 W4 W5 W6 W7 W8 W9}
deadline=$(($(date +%s) + ${BENCH_BUDGET:-300}))
for round in $(seq 1 "$rounds"); do
  for wl in W1 W2 W3 W4 W5 W6 W7 W8 W9; do
    case " $only " in *" $wl "*) ;; *) continue ;; esac
    wait_idle
    log "# ==== round $round of $rounds: $wl"
    case $wl in
      W1) w1_round ;; W2) w2_round ;; W3) w3_round ;; W4) w4_round ;; W5) w5_round ;; W6) w6_round ;;
      W7) w7_round ;; W8) w8_round ;; W9) w9_round ;;
    esac
  done
done
log "# finished $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(( $(date +%s) - start )) s"

# ---- RESULTS.md
if [ -z "$py" ]; then
  { echo "# rune benchmarks (raw output; python3 was not found to format the tables)"; echo;
    echo "Reproduce: \`make bench\` (= \`bash bench/run.sh build\`); this run: \`$invocation\`"; echo;
    echo '```'; cat "$raw"; echo '```'; } > "$results"
else
  "$py" "$here/report.py" --raw "$raw" --out "$results" --invocation "$invocation" --build "$build" || exit 1
fi
echo ">> wrote $results (raw output: $raw)" >&2
