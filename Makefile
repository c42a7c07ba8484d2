# The README names two targets: `make run` (the service) and `make test` (the suite).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint check system-deps build-deps bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Both install every extra (`all`: the channels and the workloads, docs/deployment.md#extras);
# the tests add the dev tools. The vm extra's libvirt-python builds from source against
# libvirt-dev, which system-deps installs.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[all]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install -q -e ".[all,dev]"
	touch $@

# The project's own code: a user's files beside it (the README's mywork/) are theirs to lint.
LINTED := taskqueue bot workloads tests bench scripts

system-deps:
	bash scripts/install-system-deps

build-deps:
	bash scripts/install-system-deps --build

run: build-deps $(VENV)/.installed
	$(BIN)/python -m bot $(if $(CONFIG),--config $(CONFIG))

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check $(LINTED)
	$(BIN)/mypy
	$(BIN)/lint-imports

test: system-deps $(VENV)/.installed-dev lint
	$(BIN)/pytest

bench: $(VENV)/.installed-dev
	$(BIN)/pip install -q -e ".[bench]"
	$(BIN)/python -m bench.benchmark

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
