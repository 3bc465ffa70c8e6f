# Two commands do all setup: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench chaos eval clean services-down histories

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/wiki demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .

services-down: $(STAMP)
	$(BIN)/wiki dev down

# Benchmarks on private throwaway services (about 11 min on 2 cores): bench/results.json, docs/BENCHMARKS.md.
bench: $(STAMP)
	$(BIN)/python -m bench

# The fault suite (about 12-15 min on 2 cores): real faults injected into real processes; writes docs/RELIABILITY.md.
chaos: $(STAMP)
	$(BIN)/python -m chaos

# The adversarial compile eval (about a minute on 2 cores): evals/results.json, docs/EVAL.md.
eval: $(STAMP)
	$(BIN)/python -m evals

clean:
	rm -rf $(VENV) .data

# Re-record tests/histories/*.json (only after an intentional, patched workflow change).
histories: $(STAMP)
	$(BIN)/python -m tests.histories.record
