# Two entry points for a fresh machine (Python 3.11 + pip): `make demo` and `make test`.
# Each creates its own virtual environment in .venv.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: demo test venv bench clean

venv: $(BIN)/python
$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(PIP) install -q --upgrade pip "setuptools>=77"

# Install the light core and diagnose the bundled example deployment (the seed scenario).
demo: venv
	$(PIP) install -q -c constraints.txt .
	$(BIN)/dflash-doctor check bundle fixtures/hosts/seed || test $$? -eq 1

# Install everything the tests need (torch pinned to the CPU wheel) and run the whole suite.
test: venv
	$(PIP) install -q -c constraints.txt torch==2.13.0
	$(PIP) install -q -c constraints.txt -e ".[probe,plot,test]"
	$(BIN)/python -m pytest -q

bench: venv
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) build *.egg-info
