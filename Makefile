# Two entry points, both idempotent: `make demo` and `make test` (`make lint`, then the suite).
# The venv is rebuilt only when pyproject.toml changes (the stamp file records the last install).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format docs facts bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# torch is pinned and installed on its own first: an unpinned resolve would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[local,mcp,dev]'
	touch $(STAMP)

install: $(STAMP)

# `make lint` first (ruff and mypy, one copy of those lines), then the suite. The suite runs one
# worker more than the machine has cores: a test file's tests on one worker (its module fixtures
# start once) unless tests/conftest.py lists the file as one whose tests may spread. Many tests
# wait on the processes they start, so with one worker per core the cores sat idle about 14% of
# the run; on the 2-core machine 3 workers took 8:57 where 2 took 10:12 (the same commit, a quiet
# machine, CPU idle 2.5%). Files go out in the order tests/conftest.py sorts them (slow files
# first), not most-tests-first. The 30 slowest tests are printed and every run leaves a JUnit
# report in .test-reports/.
#
# The suite starts many Python processes (trio-local, trio-mcp, trio-lint, SDK clients) that
# import this repository's own modules, which an editable install leaves uncompiled. Where
# PYTHONDONTWRITEBYTECODE is set, every one of them compiled those modules again, and every
# pytest worker assertion-rewrote every test module again. So the product is compiled once first
# (py_compile writes whatever that variable says) and the suite runs with bytecode writing on;
# __pycache__ is git-ignored and left out of the sdist.
test: lint
	$(BIN)/python -m compileall -q -j 0 trio_lint trio_local mcp_server pytrio_facts localfs docgen hooks
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $$(( $$(nproc) + 1 )) --dist loadfile --no-loadscope-reorder --durations=30 --junitxml=.test-reports/junit.xml

# The demo grows with the products: lint a buggy script, train offline, drive the MCP server.
demo: $(STAMP)
	@echo "== trio-lint on examples/ (the skill's own code: expect no findings)"
	$(BIN)/trio-lint examples/
	@echo "== trio-lint on demo/buggy_train.py (PyTRIO written with HuggingFace habits: expect findings)"
	$(BIN)/trio-lint --no-cache demo/buggy_train.py || test $$? -eq 1
	@echo "== trio-lint --diff: the safe fixes it would apply (writes nothing)"
	$(BIN)/trio-lint --no-cache --diff demo/buggy_train.py || test $$? -eq 1
	@echo "== trio-local: examples/01_train_sft.py trains offline against the tiny stand-in (loss per step)"
	$(BIN)/trio-local run -- $(BIN)/python examples/01_train_sft.py
	@echo "== trio-mcp: the official MCP client drives trio-mcp over stdio (create, train, sample, plot)"
	$(BIN)/python demo/mcp_session.py

# Render the generated docs (references/lint-rules.md, references/mcp-tools.md and the
# <!-- BEGIN GENERATED: name --> blocks) from pytrio_facts, the rule registry and the MCP tools,
# and skills/pytrio/, the installable copy of the skill's root files.
docs: $(STAMP)
	$(BIN)/python -m docgen.render

# Regenerate pytrio_facts/api_versions.json from every pytrio wheel on PyPI and
# pytrio_facts/tinker_api.json from the newest tinker wheel (the only target that downloads:
# wheels are cached under ~/.cache/pytrio-facts), then the docs built from them.
facts: $(STAMP)
	$(BIN)/python -m pytrio_facts.generate_api
	$(BIN)/python -m pytrio_facts.generate_tinker
	$(BIN)/python -m docgen.render

# ruff, then mypy over the products ([tool.mypy] in pyproject.toml: strict at the public
# boundaries; about 13 s of CPU from a clean clone, under 1 s from .mypy_cache).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .trio_lint_cache .test-reports
