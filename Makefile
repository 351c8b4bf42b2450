# Set-up and everyday commands on a fresh Debian 12 machine:
#   make test    install what is missing, build, run the whole test suite
#   make demo    install what is missing, build, run the demo
#   make bench   also install the peers (PyTorch, NumPy), run the benchmarks
#   make sanitize  the test suite built with AddressSanitizer and UBSan

PACKAGES = meson ninja-build pkg-config cmake g++ libboost-dev libtbb-dev catch2 \
           libxsimd-dev libasmjit-dev libopenblas-dev libreadline-dev
BENCH_PACKAGES = python3-torch libtorch-dev python3-numpy
BUILD ?= build
SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps bench-deps build test demo bench sanitize clean

# Installs only the packages dpkg reports missing.
deps:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q -o DPkg::Lock::Timeout=600 $$missing; \
	fi

bench-deps: deps
	@missing=""; for p in $(BENCH_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q -o DPkg::Lock::Timeout=600 $$missing; \
	fi

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

demo: build
	./$(BUILD)/examples/demo

bench: bench-deps build
	bash bench/run.sh $(BUILD)

sanitize: deps
	[ -f build-sanitize/build.ninja ] || meson setup build-sanitize --buildtype=debug -Dsanitize_tests=true -Dbench=false
	ninja -C build-sanitize
	meson test -C build-sanitize --print-errorlogs

clean:
	rm -rf $(BUILD) build-sanitize
