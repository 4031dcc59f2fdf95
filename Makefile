# SafeClaw: make install | make test | make lint | make typecheck | make bench
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
# The suite waits on sockets and processes far more than it computes: it runs in worker processes,
# more than the cores; tests sharing a module-scoped fixture stay on one worker (tests/conftest.py).
# TEST_WORKERS=0 runs it in one process, which also names the tests over 5 s without the slow mark.
TEST_WORKERS ?= 4
export VENV PYTHON

.PHONY: install lint typecheck pytest test bench clean

# Everything: system packages (apt), the Python packages and the embedded model. One recipe,
# shared with the run command: ./safeclaw skips what its stamps say is already installed.
install:
	./safeclaw install

lint: install
	$(VENV)/bin/ruff check .

typecheck: install
	$(VENV)/bin/mypy

pytest: install
	$(VENV)/bin/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup

test: install lint typecheck pytest

bench: install
	$(PY) bench/router_roundtrip.py
	$(PY) bench/mcp_roundtrip.py
	$(PY) bench/injection_flagging.py
	$(PY) bench/browser_vision.py
	$(PY) bench/jetstream_filter.py
	$(PY) bench/prompt_memory.py
	$(PY) bench/llm_local.py
	$(PY) bench/first_prompt.py
	$(PY) bench/control_plane.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
