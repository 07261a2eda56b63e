# Commands that do all set-up on a fresh machine (see README):
#   make demo     - installs everything into .venv and runs the main job on the bundled samples
#   make test     - installs everything (with Debian's chromium for the browser test,
#                   prometheus-alertmanager for the watcher test and npm's azurite for the
#                   storage tests), lint, and every test but
#                   those marked slow (CI=true, as .ci/run sets, runs them all: make test-all)
#   make test-all - the same, every test (installing apache-flink into .venv-flink for the
#                   real-engine tests, in the background from the start), and the wheel check
#                   beside the lint and the tests: what CI runs
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
OUT ?= out/demo

.PHONY: demo test test-all lint install browser alertmanager azurite flink flink-early archive-early clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[all]'  # bytecode: on first import
	@rm -f $(VENV)/.installed-* $(VENV)/spark-test-classes.jsa  # the archive: tests/jvm_archive.py
	@touch $(STAMP)

install: $(STAMP)

browser:
	@bash scripts/install-chromium.sh

alertmanager:
	@bash scripts/install-alertmanager.sh

# npm's azurite (Azure's storage emulator) into .azurite for tests/storage; fails with CI=true
# when it cannot be installed (the storage tests must run there)
azurite:
	@bash scripts/install-azurite.sh

# apache-flink in its own .venv-flink, for the real-engine tests (scripts/run-tests.sh runs it
# for the full test set only: it is large)
flink:
	@bash scripts/install-flink.sh

demo: install
	$(BIN)/orderdoc demo --out $(OUT)

# True in a recipe's shell when the full test set runs (ORDERDOC_TESTS=all, as test-all sets
# it, or CI=true without ORDERDOC_TESTS: the rule of scripts/run-tests.sh)
FULL_SET = [ "$${ORDERDOC_TESTS:-}" = all ] || { [ -z "$${ORDERDOC_TESTS:-}" ] && [ "$${CI:-}" = true ]; }

# The full set (CI=true, ORDERDOC_TESTS=all, test-all) needs apache-flink: its install starts
# in the background first, beside the project's install and the lint; the tests that need it
# wait for it (install-flink.sh takes a lock), and scripts/run-tests.sh reports a failure.
flink-early:
	@if $(FULL_SET); then \
	  bash scripts/install-flink.sh & \
	fi

# The full set's class archive for the tests' Spark JVMs (tests/jvm_archive.py) starts as soon
# as the venv is there, beside the Debian installs; scripts/run-tests.sh starts it too and then
# waits for it (a second start waits for the first under a lock, then finds the file made).
archive-early: install
	@if $(FULL_SET); then \
	  $(BIN)/python -m tests.jvm_archive >/dev/null 2>&1 & \
	fi

test: flink-early install archive-early browser alertmanager azurite
	@bash scripts/run-tests.sh

test-all: export ORDERDOC_TESTS = all
test-all: flink-early install archive-early browser alertmanager azurite
	@bash scripts/run-tests.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .venv-flink .azurite out .pytest_cache .ruff_cache .hypothesis
