# The two commands: `make demo` and `make test` (both install what is missing, then build).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all build deps configure demo test fuzz bench clean

all: build

deps:
	@bash scripts/install-deps.sh build

configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS); fi

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@bash scripts/test-deps.sh
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1200

demo: build
	@bash scripts/install-deps.sh probe
	@bash scripts/demo.sh $(BUILD)/kernlens

# libFuzzer targets (clang); bounded run, see tests/fuzz/README.md.
fuzz:
	@bash scripts/install-deps.sh build fuzz
	@bash tests/fuzz/run.sh

bench: build
	@bash tests/bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-fuzz
