# Two entry points for a fresh machine (Python 3.11 + pip): `make demo` and `make test`.
# Each creates its own virtual environment in .venv.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: demo test conformance venv bench clean

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
	@# llama.cpp's llama-server for tests/live/llamacpp, built once into the cache (10-20 min on 2 cores): on CI a
	@# failed build fails here, loudly; elsewhere the live tests skip with the reason unless DFLASH_DOCTOR_LIVE_LLAMA=1.
	@if [ "$$DFLASH_DOCTOR_CI" = 1 ] || [ "$$DFLASH_DOCTOR_LIVE_LLAMA" = 1 ]; then $(BIN)/python -m tests.live.llamacpp.engine; fi
	$(BIN)/python -m pytest -q

# The engine-source probes against the real vLLM 0.19.0–0.33.0 / SGLang 0.5.15–0.5.23 wheels (tests/conformance).
# Downloads the wheels the cache lacks (~6 GB for vLLM), extracts only their .py files beside them; ~1 min once cached.
WHEEL_CACHE ?= $(or $(DFLASH_DOCTOR_WHEEL_CACHE),$(shell test -d /work/cache/wheels && echo /work/cache/wheels),$(HOME)/.cache/dflash-doctor/wheels)
conformance: venv
	$(PIP) install -q -c constraints.txt -e ".[test]"
	DFLASH_DOCTOR_WHEEL_CACHE=$(WHEEL_CACHE) DFLASH_DOCTOR_CONFORMANCE=1 $(BIN)/python -m pytest -q -m conformance tests/conformance

bench: venv
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) build *.egg-info
