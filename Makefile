# ragbot: `make demo` answers from the built-in user guide, `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
DEMO_DATA := $(CURDIR)/data/demo

.PHONY: install dev demo test lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $@

install: $(STAMP)

dev: $(DEVSTAMP)

demo: $(STAMP)
	RAGBOT_DATA_DIR=$(DEMO_DATA) $(BIN)/ragbot ingest docs --base-url https://ragbot.dev/docs
	RAGBOT_DATA_DIR=$(DEMO_DATA) $(BIN)/ragbot ask "How do I connect ragbot to Slack?"

test: $(DEVSTAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(DEVSTAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(DEVSTAMP)
	$(BIN)/python -m pytest -q -m slow
	$(BIN)/python bench/answer_latency.py

clean:
	rm -rf $(VENV) data/demo .pytest_cache .mypy_cache .ruff_cache
