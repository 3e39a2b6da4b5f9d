# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export MPLCONFIGDIR := $(CURDIR)/.cache/matplotlib
export NO_MKDOCS_2_WARNING := 1

.PHONY: demo test lint docs bench clean services labelstudio

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

# Label Studio has its own environment (about 1 GB; its pins clash with docket's), used only by
# the end-to-end test in tests/adherence/test_labelstudio_e2e.py. Reused while the stamp exists.
# Its database migrations take minutes on 2 cores: they run once here, into a template data
# folder the test copies. The settings keep it offline (no Sentry, analytics or PyPI check).
LS_VENV := .cache/labelstudio-venv
LABEL_STUDIO := label-studio==1.23.2
LS_OFFLINE := SENTRY_DSN= FRONTEND_SENTRY_DSN= COLLECT_ANALYTICS=false LATEST_VERSION_CHECK=false

$(LS_VENV)/.installed:
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install --quiet --upgrade pip
	$(LS_VENV)/bin/pip install --quiet '$(LABEL_STUDIO)'
	rm -rf $(LS_VENV)/template
	$(LS_OFFLINE) $(LS_VENV)/bin/label-studio version --data-dir $(LS_VENV)/template > /dev/null
	touch $@

labelstudio: $(LS_VENV)/.installed

demo: $(VENV)/.installed-run
	$(BIN)/docket judge examples/pairs.jsonl --method dream --model local --db docket.db --job demo

services:
	bash scripts/test-services.sh

test: $(VENV)/.installed-dev services $(LS_VENV)/.installed
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
