# Two commands do all set-up: `make demo` and `make test`. Each creates/updates .venv itself.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# torch==2.13.0 is a CPU wheel on local disk; find-links makes pip take it instead of a CUDA build.
PIP_FLAGS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: demo test test-all bench venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PIP_FLAGS) -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/tmcheck demo

test: $(STAMP)
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -n 2 -m "not slow and not gpu" -q

test-all: $(STAMP)
	$(PY) -m pytest -n 2 -q

bench: $(STAMP)
	$(PY) -m pip install -q $(PIP_FLAGS) -e '.[dev,bench]'
	$(PY) -m benchmarks.run_all

clean:
	rm -rf $(VENV) build *.egg-info
