# raidlab — the contributor interface. `make help` lists the targets.
# Everything a fresh machine needs (beyond Rust, Python 3.9+ and pip) is installed from
# crates.io and PyPI by these targets into ./.venv and ./target.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Keep in step with [project.dependencies] and the test and dask extras in pyproject.toml.
PY_PACKAGES := maturin numpy pandas pyarrow matplotlib rich markdown-it-py tomli-w pytest dask distributed

# Compiles the extension in release mode and installs it into .venv.
DEVELOP := VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH $(BIN)/maturin develop --release --quiet

VENV_STAMP := $(VENV)/.raidlab-venv
BUILD_STAMP := $(VENV)/.raidlab-build
EXTENSION := $(wildcard python/raidlab/_core*.so)
RUST_INPUTS := Cargo.toml Cargo.lock pyproject.toml $(shell find crates -name '*.rs' -o -name Cargo.toml)

# A deleted extension module means the build must run again, whatever the stamp says.
ifeq ($(EXTENSION),)
$(shell rm -f $(BUILD_STAMP))
endif

.PHONY: help venv build pgo demo test bench bench-sweep docs validation browser clean distclean bench-cache bench-rebuild-plan

help: ## List the targets
	@echo "raidlab make targets:"
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

venv: $(VENV_STAMP) ## Create .venv with maturin and the Python dependencies

$(VENV_STAMP): Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PY_PACKAGES)
	touch $@

build: $(BUILD_STAMP) ## Compile the Rust extension (release) into the venv; Python edits need no rebuild

$(BUILD_STAMP): $(VENV_STAMP) $(RUST_INPUTS)
	$(DEVELOP)
	touch $@

# Profile-guided optimisation (`make pgo`): an instrumented build of the extension runs a
# training set (the benchmark cases, the two experiments, and the drive validation where
# ../shared/diskspecs is), then the extension is built again with the branch and call counts
# it recorded. Same results, up to 5-8 % faster simulations (none on the cached 18ES since
# 2026-11-23), about three times the build time (docs/performance.md). `make build` after
# a Rust change builds without PGO again; the build stamp goes first, so that an
# interrupted `make pgo` leaves no instrumented extension behind for `make build` to keep.
PGO_DIR := target/pgo
RUST_HOST = $(shell rustc -vV | sed -n 's/^host: //p')
LLVM_PROFDATA = $(shell rustc --print sysroot)/lib/rustlib/$(RUST_HOST)/bin/llvm-profdata

pgo: $(VENV_STAMP) ## Build the extension with profile-guided optimisation: up to 5-8 % faster runs, a longer build (needs rustup's llvm-tools)
	@test -x "$(LLVM_PROFDATA)" || rustup component add llvm-tools || { \
	  echo "make pgo: $(LLVM_PROFDATA) is missing and rustup could not add llvm-tools; 'make build' builds without PGO" >&2; exit 1; }
	rm -rf $(BUILD_STAMP) $(PGO_DIR)/profiles $(PGO_DIR)/training
	RUSTFLAGS="-Cprofile-generate=$(abspath $(PGO_DIR))/profiles" CARGO_TARGET_DIR=$(PGO_DIR)/instrumented $(DEVELOP)
	$(BIN)/raidlab bench --requests 200000 > /dev/null
	$(BIN)/raidlab run experiments/demo.toml -o $(PGO_DIR)/training/demo > /dev/null
	$(BIN)/raidlab run experiments/thesis_normal_mode.toml -o $(PGO_DIR)/training/thesis > /dev/null
	if [ -d ../shared/diskspecs ]; then $(BIN)/raidlab docs validation --diskspecs ../shared/diskspecs \
	  -o $(PGO_DIR)/training/validation.md > /dev/null; fi
	"$(LLVM_PROFDATA)" merge -o $(PGO_DIR)/merged.profdata $(PGO_DIR)/profiles
	RUSTFLAGS="-Cprofile-use=$(abspath $(PGO_DIR))/merged.profdata" CARGO_TARGET_DIR=$(PGO_DIR)/optimised $(DEVELOP)
	touch $(BUILD_STAMP)

demo: build ## Run experiments/demo.toml into runs/demo and plot it
	$(BIN)/raidlab run experiments/demo.toml -o runs/demo --force
	$(BIN)/raidlab plot runs/demo

# The reproduction report's test opens it in Debian's headless Chromium. Installed here when
# missing and this runs as root (as CI does); elsewhere, or when apt cannot, the test is
# skipped and says why. Never fails the build.
browser: ## Install Debian's chromium for the report's browser test, if missing and root
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" != 0 ]; then echo "make browser: not root, chromium not installed (the report's browser test will be skipped)"; \
	elif ! command -v apt-get >/dev/null 2>&1; then echo "make browser: no apt-get, chromium not installed (the report's browser test will be skipped)"; \
	else (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "make browser: apt-get could not install chromium (the report's browser test will be skipped)"; fi

test: build browser ## What CI runs: Rust tests, then pytest
	cargo test --workspace --exclude raidlab-py
	$(BIN)/python -m pytest -q tests

# The benchmarks compile the package's bytecode before they time it, as pip does when it
# installs a package: an editable install under PYTHONDONTWRITEBYTECODE would otherwise
# compile every module at every start of a command or a sweep's worker.
COMPILE_BYTECODE := $(BIN)/python -m compileall -q python/raidlab

bench: build ## Criterion benchmarks of the core, then `raidlab bench`, whole `raidlab run` processes (/usr/bin/time), then a whole 18 TB rebuild
	cargo bench -p raidlab-core
	$(BIN)/raidlab bench
	@mkdir -p target/bench
	cargo run --release --quiet -p raidlab-core --example bench_trace -- 1000000 target/bench/ibm18es_cached_1m.trace
	$(COMPILE_BYTECODE)
	/usr/bin/time -f "whole process, raidlab run of 1,000 requests: %e s wall, %U s user, %M KiB peak" \
	  $(BIN)/raidlab run experiments/bench/startup_1000.toml -o target/bench/startup_1000 --force --quiet > /dev/null
	/usr/bin/time -f "whole process, raidlab run of the 1 M-request ibm18es trace: %e s wall, %U s user, %M KiB peak" \
	  $(BIN)/raidlab run experiments/bench/ibm18es_cached_trace.toml -o target/bench/ibm18es_cached_1m --force --quiet > /dev/null
	$(BIN)/raidlab bench --case rebuild_20tb --case rebuild_20tb_pro

bench-sweep: build ## A 64-run sweep on 1 and 2 worker processes: scaling and the machinery's time per run
	$(COMPILE_BYTECODE)
	$(BIN)/python -m raidlab.experiments.sweep_bench

bench-rebuild-plan: build ## raidlab rebuild-plan's default set (8 candidates) on 1 M requests, timed by /usr/bin/time
	rm -rf target/bench/rebuild-plan
	/usr/bin/time -f "raidlab rebuild-plan, 8 candidates, 1 M requests: %e s wall, %U s user, %M KiB peak resident (largest process)" \
	  $(BIN)/raidlab rebuild-plan experiments/bench/rebuild_plan_1m.toml -o target/bench/rebuild-plan --p99-slo-ms 150

bench-cache: build ## Buffer cache: raidlab's LRU against libCacheSim's on a Zipf(1.0) trace, VDF's cost (installs libcachesim into .venv)
	$(BIN)/python benches/cache_vs_libcachesim.py

docs: build ## Regenerate docs/config.md, docs/config.schema.json and docs/catalogue.md from the core
	$(BIN)/raidlab schema -o docs/config.schema.json
	$(BIN)/raidlab docs config -o docs/config.md
	$(BIN)/raidlab docs catalogue -o docs/catalogue.md

validation: build ## Validate the drive models against DiskSim's real-drive traces: docs/validation.md
	$(BIN)/raidlab docs validation -o docs/validation.md --diskspecs ../shared/diskspecs

.PHONY: bless
bless: build ## Rewrite tests/golden/*.json on purpose: the reproductions' golden cells from the current code
	$(BIN)/python -m raidlab.reproductions.golden --bless

clean: ## Remove build outputs (target/, the extension module, caches); keeps .venv and runs/
	cargo clean
	rm -f python/raidlab/_core*.so $(BUILD_STAMP)
	rm -rf .pytest_cache
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean ## clean, and remove .venv too
	rm -rf $(VENV)
