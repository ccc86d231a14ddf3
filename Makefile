# Plait: two commands on a fresh machine.
#   make demo   builds the benchmarks (Release, gcc and clang-16), runs the tour of all four studies
#               (studies/tours/demo.toml), prints the verdict table, writes report/;
#               make demo FULL=1 runs the full-size studies instead (hours: README)
#   make test   builds every tree (gcc and clang-16 Release, TSan, ASan+UBSan with the debug
#               build's assertions; gcc TSan for the OpenMP library) and runs the whole suite
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := $(HOME)/.local/bin:$(PATH)

# The assertions of a debug build are checked in the asan tree (a Debug build with the sanitizers'
# -O1); the gcc-debug tree is there for `make test-gcc-debug`.
TEST_PRESETS ?= gcc-release clang-release tsan asan

.PHONY: all bootstrap build demo test test-% build-% bins-% bench-fib install-check pytest clean fuzz-omp

all: build

bootstrap:
	@scripts/bootstrap.sh

build-%: bootstrap
	@cmake --preset $* >/dev/null
	@cmake --build --preset $*

build: build-gcc-release build-clang-release

# The benchmark binaries and the libraries plait-bench preloads, without the test suite.
bins-%: bootstrap
	@cmake --preset $* >/dev/null
	@cmake --build --preset $* --target plait-bench-bins

# The main job: the tour of the four studies (FULL=1: the full-size studies).
demo: bins-gcc-release bins-clang-release
	@FULL="$(FULL)" scripts/demo.sh

test: bootstrap
	@for p in $(TEST_PRESETS); do \
	  echo "=== [$$p] build"; cmake --preset $$p >/dev/null; cmake --build --preset $$p; \
	done
	@for p in $(TEST_PRESETS); do \
	  echo "=== [$$p] ctest"; ctest --preset $$p -j2; \
	done
	@echo "=== [gcc-tsan] libplait-omp and the OpenMP conformance suite under gcc's ThreadSanitizer"
	@cmake --preset gcc-tsan >/dev/null && cmake --build --preset gcc-tsan --target plait-omp-suite
	@ctest --preset gcc-tsan -j2
	@echo "=== [gcc-release] ctest with PLAIT_STRESS=1 (random yields at protocol points)"
	@PLAIT_STRESS=1 ctest --preset gcc-release -j2 -L runtime
	@$(MAKE) --no-print-directory install-check
	@$(MAKE) --no-print-directory pytest

test-%: build-%
	@ctest --preset $* -j2

install-check: build-gcc-release
	@scripts/check-install.sh

# Two passes: the tests marked serial (python/tests/conftest.py: load, timings, deadlines) run alone
# after the rest, which runs in two processes; both passes run, and either failing fails the target.
pytest:
	@if [ -f python/pyproject.toml ]; then cd python && export PLAIT_BENCH_REQUIRE_BUILD=1 && rc=0 && \
	  { uv run --frozen pytest -q --durations=10 -n 2 -m "not serial" || rc=$$?; } && \
	  { uv run --frozen pytest -q --durations=10 -m serial || rc=$$?; } && exit $$rc; \
	else echo "no python package yet"; fi

# The OpenMP differential tester for longer: make fuzz-omp SECONDS=3600 [SEED=7]; findings (reduced
# programs) go to results/omp-fuzz/ (docs/openmp.md, "Differential testing").
SECONDS ?= 600
SEED ?= $(shell date +%s)
fuzz-omp: build-gcc-release
	@python3 tools/omp-fuzz/omp_fuzz.py --seconds $(SECONDS) --seed $(SEED) --keep-going \
	  --plait build/gcc-release/libplait-omp.so.1 --work results/omp-fuzz

bench-fib: build
	@scripts/bench_fib.py --markdown

clean:
	rm -rf build report
