# Two commands do all setup: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo demo-simulated test lint bench chaos eval clean services-down histories mutants
PROVIDER ?= anthropic

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bedrock]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/wiki demo

# The demo through the real Claude path (SDK, streaming, errors, pricing) against the local simulator;
# PROVIDER=bedrock through the SDK's Bedrock client; PROVIDER=openai-compatible through the openai SDK
# against a fake local model server (openai_sim/, playing Ollama).
demo-simulated: $(STAMP)
ifeq ($(PROVIDER),openai-compatible)
	$(BIN)/python -m openai_sim run -- $(BIN)/wiki demo
else
	$(BIN)/python -m claude_sim run --provider $(PROVIDER) -- $(BIN)/wiki demo
endif

# Two pytest-xdist workers, each with its own services; tests sharing a compiled corpus stay on one
# worker (tests/parallel.py). TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= 2
test: lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

# Ruff, then mypy over the layer folders (their list and settings: [tool.mypy] in pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

services-down: $(STAMP)
	$(BIN)/wiki dev down

# Benchmarks on private throwaway services: every part (about half an hour on 2 cores), or only the parts
# named in PARTS (make bench PARTS="cost realistic"; the parts: bench/parts.py), merged into
# bench/results.json; docs/BENCHMARKS.md is written whole from it either way. PROVIDER=openai-compatible
# measures the cost and realistic parts through the OpenAI-compatible fake instead (the part `local`).
bench: $(STAMP)
	$(BIN)/python -m bench --provider $(PROVIDER) $(PARTS)

# The fault suite (about 12-15 min on 2 cores): real faults injected into real processes; writes docs/RELIABILITY.md.
chaos: $(STAMP)
	$(BIN)/python -m chaos

# The adversarial compile eval (about a minute on 2 cores): evals/results.json, docs/EVAL.md.
eval: $(STAMP)
	$(BIN)/python -m evals
	$(BIN)/python -m evals.recall_eval
	$(BIN)/python -m evals.conversations_eval
	$(BIN)/python -m evals.calibration
	$(BIN)/python -m evals.locomo_eval
	$(BIN)/python -m evals.supersession_eval
	$(BIN)/python -m evals.page_coverage

clean:
	rm -rf $(VENV) .data

# Record tests/histories/<version>/ for the version in pyproject.toml (refused once that version is
# released and recorded; docs/ARCHITECTURE.md, "Rolling out a workflow change").
histories: $(STAMP)
	$(BIN)/python -m tests.histories.record

# The mutation check (4-7 min on 2 cores): rule-breaking edits to a temporary copy, each must fail a test.
mutants: $(STAMP)
	$(BIN)/python -m tests.mutants
