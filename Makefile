# The README names two targets: `make run` (the service) and `make test` (the suite).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint check system-deps bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# `make run` needs only the package; the tests also need the dev tools and the vm extra
# (libvirt-python builds from source against libvirt-dev, which system-deps installs).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install -q -e ".[dev,vm]"
	touch $@

system-deps:
	bash scripts/install-system-deps

run: $(VENV)/.installed
	$(BIN)/python -m bot $(if $(CONFIG),--config $(CONFIG))

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: system-deps $(VENV)/.installed-dev lint
	$(BIN)/pytest

bench: $(VENV)/.installed-dev
	$(BIN)/pip install -q -e ".[bench]"
	$(BIN)/python -m bench.benchmark

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
