# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test lint typecheck pytest bench reliability clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[dev,otel,serve,mcp]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/wayline demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(BIN)/python -m bench

# The long reliability variants (chaos, faults, SIGKILL, secrets, fuzzing, concurrency,
# plugin-host security); prints every figure with its goal and pass/fail.
reliability: $(STAMP)
	$(BIN)/python tests/reliability/report.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
