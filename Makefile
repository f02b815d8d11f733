# The two commands: `make demo` and `make test` (both install what is missing, then build).
# `make deps` also makes the project venv .venv/ (PyTorch 2.x from PyPI, pinned: requirements/).
BUILD ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all apt venv build build-demo deps configure demo test check fuzz bench install package vsix wheel clean

all: build

apt:
	@bash scripts/install-deps.sh build venv

venv: apt
	@bash scripts/venv.sh

deps: apt venv

configure: apt
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS); fi

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what the demo needs: the binary and its probe (no test executables).
build-demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target kernlens

test: build
	@bash scripts/test-deps.sh
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1200

# The quick loop on a built tree: unit tests, LSP transcripts and source checks, nothing slow.
check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L 'unit|lsp|static' -LE slow

# The venv (network-bound: PyTorch from PyPI) is made while the binary compiles (CPU-bound); both
# depend on `apt`, which the sub-make runs once.
demo:
	@$(MAKE) --no-print-directory -j2 --output-sync=target venv build-demo
	@bash scripts/demo.sh $(BUILD)/kernlens

# libFuzzer targets (clang); bounded run, see tests/fuzz/README.md.
fuzz:
	@bash scripts/install-deps.sh build fuzz
	@bash tests/fuzz/run.sh

bench: build
	@bash scripts/install-deps.sh bench
	@bash tests/bench/run.sh $(BUILD)

# Install under PREFIX (DESTDIR is honoured): bin/kernlens, share/kernlens/, share/doc/kernlens/.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# Debian package: $(BUILD)/kernlens_<version>_amd64.deb (Depends computed by dpkg-shlibdeps).
package: build
	@bash scripts/install-deps.sh package
	cd $(BUILD) && cpack -G DEB

# VS Code extension bundled with esbuild, embedding this build's server: $(BUILD)/kernlens-linux-x64.vsix
vsix: build
	@bash scripts/package-vsix.sh $(BUILD) $(BUILD)/kernlens-linux-x64.vsix

# Python packages (`pip install`): $(BUILD)/dist/kernlens-<version>-py3-none-manylinux_<glibc>_x86_64.whl
# (auditwheel-repaired: bundles the libraries manylinux does not promise) and the sdist
# kernlens-<version>.tar.gz; built by scikit-build-core in $(BUILD)-wheel with the project venv's
# pinned tools (requirements/wheel.txt). See docs/install.md.
wheel: venv build
	@bash scripts/build-wheel.sh $(BUILD) $(BUILD)/dist

clean:
	rm -rf $(BUILD) $(BUILD)-wheel build-fuzz
