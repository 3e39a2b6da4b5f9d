# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export MPLCONFIGDIR := $(CURDIR)/.cache/matplotlib

.PHONY: demo test lint bench clean services

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files: reinstall only when pyproject.toml changes.
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,server,dev]'
	touch $(VENV)/.installed-run $@

demo: $(VENV)/.installed-run
	$(BIN)/docket judge examples/pairs.jsonl --method dream --model local --db docket.db --job demo

services:
	bash scripts/test-services.sh

test: $(VENV)/.installed-dev services
	$(BIN)/ruff check src tests benchmarks
	. ./.cache/test-env.sh && $(BIN)/pytest -q -m "" -p no:cacheprovider

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench: $(VENV)/.installed-dev
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .cache docket.db
