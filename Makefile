# Set-up and everyday commands on a fresh Debian 12 machine:
#   make test    install what is missing, build, run the whole test suite
#   make demo    install what is missing, build the demo alone, run it (figures in $(BUILD)/demo-plots)
#   make bench   also install the peers (PyTorch, NumPy), run the benchmarks
#   make sanitize  the test suite built with AddressSanitizer and UBSan
#   make fuzz    the libFuzzer targets, a minute each (docs/reliability.md)
#   make tsan    the concurrency test built with ThreadSanitizer
#   make test-arm64  the test suite cross-built for 64-bit ARM, run under qemu (docs/platforms.md)

# clang 14 (Debian 12's own) builds the library and the fuzz targets, and the
# test clang_headers compiles the public headers, the examples and the docs'
# programs with it.
CLANG = 14
# python3-numpy: the differential suite's oracle (tests/differential); its
# derivative part needs python3-torch, which only BENCH_PACKAGES installs.
# Open MPI: the ranks of a job as an axis (docs/scale-out.md) and its tests.
PACKAGES = meson ninja-build pkg-config cmake g++ libboost-dev libtbb-dev catch2 \
           libxsimd-dev libasmjit-dev libopenblas-dev libreadline-dev clang-$(CLANG) python3-numpy \
           libopenmpi-dev openmpi-bin
BENCH_PACKAGES = python3-torch libtorch-dev python3-numpy python3-numba python3-numexpr
FUZZ_PACKAGES = clang-$(CLANG) libclang-rt-$(CLANG)-dev
# 64-bit ARM from x86-64: Debian's cross compiler, the arm64 libraries and
# qemu's user-mode emulation (dpkg --add-architecture arm64 first).
ARM64_PACKAGES = g++-aarch64-linux-gnu qemu-user-static libboost-dev:arm64 libtbb-dev:arm64 \
                 libxsimd-dev:arm64 libasmjit-dev:arm64 libopenblas-dev:arm64 libreadline-dev:arm64
FUZZ_SECONDS ?= 60
BUILD ?= build
SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps bench-deps fuzz-deps arm64-deps build test demo bench sanitize fuzz tsan test-arm64 clean

# Installs only the packages of the list $(1) that dpkg reports missing.
install_missing = missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q -o DPkg::Lock::Timeout=600 $$missing; \
	fi

deps:
	@$(call install_missing,$(PACKAGES))

bench-deps: deps
	@$(call install_missing,$(BENCH_PACKAGES))

fuzz-deps: deps
	@$(call install_missing,$(FUZZ_PACKAGES))

# The arm64 packages, and the kernel told to run arm64 programs with qemu
# (binfmt_misc: the tests compile programs and run them directly).
arm64-deps: deps
	@dpkg --print-foreign-architectures | grep -qx arm64 || $(SUDO) dpkg --add-architecture arm64
	@$(call install_missing,$(ARM64_PACKAGES))
	@[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { \
	  [ -e /proc/sys/fs/binfmt_misc/register ] || $(SUDO) mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; \
	  $(SUDO) sh -c 'cat /usr/lib/binfmt.d/qemu-aarch64.conf > /proc/sys/fs/binfmt_misc/register'; }

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

# meson test's counts become the closing line "N passed, N failed"
# (expected failures are passes; unexpected passes and timeouts are failures).
test: build
	@set -o pipefail; meson test -C $(BUILD) --print-errorlogs 2>&1 | tee $(BUILD)/test-summary.log; status=$$?; \
	awk '/^Ok:/{ok=$$2} /^Expected Fail:/{xf=$$3} /^Fail:/{f=$$2} /^Unexpected Pass:/{up=$$3} /^Timeout:/{t=$$2} \
	     END{print ok+xf " passed, " f+up+t " failed"}' $(BUILD)/test-summary.log; exit $$status

# Builds only the demo (and the library it links), not the test suite.
demo: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) examples/demo
	./$(BUILD)/examples/demo --out $(BUILD)/demo-plots

bench: bench-deps build
	bash bench/run.sh $(BUILD)

sanitize: deps
	[ -f build-sanitize/build.ninja ] || meson setup build-sanitize --buildtype=debug -Dsanitize_tests=true -Dbench=false
	ninja -C build-sanitize
	meson test -C build-sanitize --print-errorlogs

# Builds only the fuzz targets (and what they link); each runs FUZZ_SECONDS
# (make fuzz FUZZ_SECONDS=1800 for a long run); fails when one finds a crash.
fuzz: fuzz-deps
	[ -f build-fuzz/build.ninja ] || CXX=clang++-$(CLANG) meson setup build-fuzz --buildtype=debugoptimized \
	  -Dfuzz=true -Dtests=false -Dbench=false
	ninja -C build-fuzz fuzz/fuzz_program fuzz/fuzz_repl
	bash fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# Emulation runs the suite some ten times slower: timeouts ten times longer.
# MPI is left out (the ranks suite would need Open MPI's arm64 libraries and
# its launcher running arm64 programs).
test-arm64: arm64-deps
	[ -f build-arm64/build.ninja ] || meson setup build-arm64 --cross-file cross/aarch64-linux-gnu.ini \
	  --buildtype=release -Dmpi=disabled -Dbench=false
	ninja -C build-arm64
	meson test -C build-arm64 --print-errorlogs --timeout-multiplier 10

tsan: deps
	[ -f build-tsan/build.ninja ] || meson setup build-tsan --buildtype=debugoptimized -Dsanitize_threads=true -Dbench=false
	ninja -C build-tsan tests/test_concurrency
	meson test -C build-tsan --no-rebuild --print-errorlogs test_concurrency

clean:
	rm -rf $(BUILD) build-sanitize build-fuzz build-tsan
