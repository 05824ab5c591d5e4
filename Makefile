# codeseek: two commands for a newcomer (`make demo`, `make test`); each sets itself up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.codeseek-installed

.PHONY: setup test demo lint bench eval clean

# After the install: bytecode for the project's own modules, as a regular (non-editable) install has,
# brought up to date on every setup (only changed files are compiled). A `codeseek` process then
# imports them without compiling ~90 modules: ~0.2 s of a warm search where PYTHONDONTWRITEBYTECODE is set.
setup: $(STAMP)
	@$(BIN)/python -m compileall -q indexing retrievers graph lsp_server

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, the CPU build: a plain `torch` requirement would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# The static embedding model: the shipped one (retrievers/data) when the packaged MiniLM is the
	# source; `codeseek model` checks it and returns at once (another source is distilled once here).
	HF_HUB_OFFLINE=1 $(BIN)/codeseek model
	touch $(STAMP)

test: setup
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q --durations=15

demo: setup
	HF_HUB_OFFLINE=1 $(BIN)/python bench/demo.py

eval: setup
	HF_HUB_OFFLINE=1 $(BIN)/python bench/eval_public.py

lint: setup
	$(BIN)/ruff check indexing retrievers graph lsp_server tests bench
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
