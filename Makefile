# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export MPLCONFIGDIR := $(CURDIR)/.cache/matplotlib
export NO_MKDOCS_2_WARNING := 1

.PHONY: demo test lint docs bench clean services

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# llama.cpp picks its CPU kernels when it is compiled. A fixed x86-64-v3 set (AVX2, FMA,
# F16C) gives every machine the same kernels, and leaves out AMX, whose kernels fault in
# some virtual machines (general protection fault in libggml-cpu on a Xeon with AMX under
# Firecracker). --no-cache-dir: a wheel pip built earlier with native kernels is not reused.
LLAMA_CPP := llama-cpp-python>=0.3.36,<0.4
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
endif

$(VENV)/.installed-llama: | $(BIN)/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-cache-dir '$(LLAMA_CPP)'
	touch $@

# Stamp files: reinstall only when pyproject.toml changes.
$(VENV)/.installed-run: pyproject.toml $(VENV)/.installed-llama | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed-llama | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local,server,dev,docs]'
	touch $(VENV)/.installed-run $@

demo: $(VENV)/.installed-run
	$(BIN)/docket judge examples/pairs.jsonl --method dream --model local --db docket.db --job demo

services:
	bash scripts/test-services.sh

test: $(VENV)/.installed-dev services
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mkdocs build --strict --quiet --site-dir .cache/site
	. ./.cache/test-env.sh && $(BIN)/pytest -q -m "" -p no:cacheprovider

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

# The user guide and the API reference as a site in site/; strict: a broken link, a page
# missing from the nav or a docstring that names no parameter fails the build.
docs: $(VENV)/.installed-dev
	$(BIN)/mkdocs build --strict

bench: $(VENV)/.installed-dev
	for script in benchmarks/[a-z]*.py; do $(BIN)/python $$script || exit 1; done
	$(BIN)/python scripts/benchmarks_doc.py

clean:
	rm -rf $(VENV) .cache docket.db site
